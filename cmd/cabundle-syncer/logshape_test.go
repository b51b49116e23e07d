package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/cmdline/logtest"
	"github.com/kyma-project/kim-snatch/pkg/syncer"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// The sync line that docs/operations.md ("Logs") shows has the keys, types
// and time format of the line the binary writes when it writes a caBundle.
func TestSyncLineIsAsDocumented(t *testing.T) {
	documented := logtest.DocumentedLine(t, filepath.Join("..", "..", "docs", "operations.md"), syncer.MsgWritten)
	c := newCluster(t)
	setupObjects(t, c.Clientset, certtest.MustCA(t, certtest.Options{CommonName: "ca"}))
	p := startSyncer(t, "replica", "--kubeconfig="+c.KubeconfigPath, "--leader-elect=false")
	var lines [][]byte
	poll.Eventually(t, fmt.Sprintf("a %q line", syncer.MsgWritten), func(context.Context) error {
		if lines = logtest.Lines([]byte(p.Log()), syncer.MsgWritten); len(lines) == 0 {
			return fmt.Errorf("none; log:\n%s", p.LogTail(20))
		}
		return nil
	})
	logtest.CompareShape(t, documented, lines[0])
}
