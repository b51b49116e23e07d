package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/cmdline/logtest"
	"github.com/kyma-project/kim-snatch/pkg/syncer"
)

// The sync line that docs/operations.md ("Logs") shows has the keys, types
// and time format of the line the binary writes when it writes a caBundle.
func TestSyncLineIsAsDocumented(t *testing.T) {
	documented := logtest.DocumentedLine(t, filepath.Join("..", "..", "docs", "operations.md"), syncer.MsgWritten)
	c := newCluster(t)
	setupObjects(t, c.Clientset, certtest.MustCA(t, certtest.Options{CommonName: "ca"}))
	p := startSyncer(t, "replica", "--kubeconfig="+c.KubeconfigPath, "--leader-elect=false")
	var lines [][]byte
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		lines = logtest.Lines([]byte(p.Log()), syncer.MsgWritten)
		return len(lines) > 0, nil
	})
	if err != nil {
		t.Fatalf("no %q line within 30s:\n%s", syncer.MsgWritten, p.LogTail(20))
	}
	logtest.CompareShape(t, documented, lines[0])
}
