package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
	"github.com/kyma-project/kim-snatch/test/process"
)

// The built binary, run as a process: its build-info gauge carries the
// version, revision and Go version that --version prints, value 1.
func TestBuildInfoAgreesWithVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("process test: builds the binary")
	}
	dir := t.TempDir()
	bin, err := process.Build(context.Background(), binaryName, dir)
	if err != nil {
		t.Fatal(err)
	}
	certDir := filepath.Join(dir, "certs")
	if err := os.Mkdir(certDir, 0o755); err != nil {
		t.Fatal(err)
	}
	certtest.MustWriteAtomic(t, certDir, certtest.MustCA(t, certtest.Options{}).MustIssue(t, certtest.Localhost(2)).Files())
	ports, err := framework.FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	p, err := process.Start(process.Options{
		Name: binaryName, Path: bin, LogPath: filepath.Join(dir, "webhook.log"),
		Args: []string{
			"--cert-dir=" + certDir, "--shutdown-delay=0",
			"--webhook-port=" + strconv.Itoa(ports[0]),
			"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(ports[1]),
			"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(ports[2]),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(5 * time.Second)

	url := "http://127.0.0.1:" + strconv.Itoa(ports[1]) + "/metrics"
	var labels map[string]string
	var value float64
	err = poll.Until(t.Context(), "a scrape of snatch_webhook_build_info", func(context.Context) error {
		var err error
		labels, value, err = process.Series(http.DefaultClient, url, "snatch_webhook_build_info")
		if err != nil && p.Exited() {
			return poll.Stop(fmt.Errorf("%s exited: %w", binaryName, err))
		}
		return err
	})
	if err != nil {
		t.Fatalf("%v; log:\n%s", err, p.LogTail(20))
	}
	out := process.Run(t, bin, "--version")
	want := fmt.Sprintf("%s %s (%s, %s/%s, revision %s)\n", binaryName, labels["version"], labels["goversion"], runtime.GOOS, runtime.GOARCH, labels["revision"])
	if out != want || value != 1 || len(labels) != 3 {
		t.Errorf("--version printed %q; snatch_webhook_build_info%v = %v, want the labels of %q and 1", out, labels, value, want)
	}
	if labels["version"] != process.TestVersion || labels["revision"] == "" || labels["revision"] == "unknown" {
		t.Errorf("snatch_webhook_build_info%v, want version %s and the commit built", labels, process.TestVersion)
	}
}
