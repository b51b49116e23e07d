package serving

import (
	"strings"
	"testing"

	"github.com/kyma-project/kim-snatch/test/process"
)

const (
	// libraryWatcher is the package this package's CertWatcher stands in for.
	libraryWatcher = "sigs.k8s.io/controller-runtime/pkg/certwatcher"
	// webhookBinary is the binary whose memory the reason in doc.go is about.
	webhookBinary = "github.com/kyma-project/kim-snatch/cmd/snatch-webhook"
)

// costly are the packages that make linking libraryWatcher expensive: the
// client-go scheme, whose init registers every API group, and
// controller-runtime's metrics, which links client-go.
var costly = []string{
	"k8s.io/client-go/kubernetes/scheme",
	"sigs.k8s.io/controller-runtime/pkg/metrics",
}

// Keeps true the reason doc.go gives for an own certificate watcher
// ("Why not controller-runtime's certwatcher"): the library's watcher links
// client-go, and the webhook does not. When the first half stops being true
// (a controller-runtime upgrade), the library's watcher may have become
// cheap: measure again and switch. When the second does, the webhook pays
// for client-go anyway, and the reason is gone.
func TestDependenciesLibraryWatcherLinksClientGoAndTheWebhookDoesNot(t *testing.T) {
	library := deps(t, libraryWatcher)
	for _, p := range costly {
		if !library[p] {
			t.Errorf("%s no longer links %s: the reason in doc.go for an own certificate watcher may be gone; run `make bench` with the library's watcher and compare the webhook's RSS", libraryWatcher, p)
		}
	}
	webhook := deps(t, webhookBinary)
	if len(webhook) == 0 || !webhook["github.com/kyma-project/kim-snatch/pkg/serving"] {
		t.Fatalf("go list found no dependencies of %s", webhookBinary)
	}
	for _, p := range costly {
		if webhook[p] {
			t.Errorf("%s links %s, so it pays the cost that doc.go gives as the reason for an own certificate watcher; switch to %s or drop the dependency", webhookBinary, p, libraryWatcher)
		}
	}
}

// deps returns the packages pkg links, itself included.
func deps(t *testing.T, pkg string) map[string]bool {
	t.Helper()
	out := process.Run(t, "go", "list", "-deps", "-f", "{{.ImportPath}}", pkg)
	set := map[string]bool{}
	for _, p := range strings.Fields(out) {
		set[p] = true
	}
	return set
}
