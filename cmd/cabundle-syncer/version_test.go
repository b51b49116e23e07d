package main

import (
	"fmt"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/test/process"
)

// The built binary, run as a process: its build-info gauge carries the
// version, revision and Go version that --version prints, value 1.
func TestBuildInfoAgreesWithVersion(t *testing.T) {
	c := newCluster(t)
	setupObjects(t, c.Clientset, certtest.MustCA(t, certtest.Options{}))
	p := startSyncer(t, "replica-1", append([]string{"--kubeconfig=" + c.KubeconfigPath, "--leader-election-namespace=" + namespace}, leaseFlags...)...)
	p.waitMetric("cabundle_syncer_is_leader", 1, 30*time.Second)

	labels, value, err := process.Series(http.DefaultClient, "http://"+p.metrics+"/metrics", "cabundle_syncer_build_info")
	if err != nil {
		t.Fatal(err)
	}
	out := process.Run(t, binary(t), "--version")
	want := fmt.Sprintf("%s %s (%s, %s/%s, revision %s)\n", binaryName, labels["version"], labels["goversion"], runtime.GOOS, runtime.GOARCH, labels["revision"])
	if out != want || value != 1 || len(labels) != 3 {
		t.Errorf("--version printed %q; cabundle_syncer_build_info%v = %v, want the labels of %q and 1", out, labels, value, want)
	}
	if labels["version"] != testVersion || labels["revision"] == "" || labels["revision"] == "unknown" {
		t.Errorf("cabundle_syncer_build_info%v, want version %s and the commit built", labels, testVersion)
	}
}
