package framework

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// failOpenMarker is in the line kube-apiserver's admission dispatcher logs
// when a call to a webhook fails and its failurePolicy Ignore admits the
// object without it; the line ends with the call's error.
const failOpenMarker = "failing open"

// FailOpenCalls returns up to limit of the lines in which kube-apiserver
// logged a failed webhook call it admitted without the webhook, with the
// error of each: the reason a test's fail-open count rose. It reads every
// log of the API server the cluster started, restarts included; an
// existing cluster has none.
func (c *Cluster) FailOpenCalls(limit int) ([]string, error) {
	if c.Dir == "" {
		return nil, nil
	}
	logs, err := filepath.Glob(filepath.Join(c.Dir, APIServer+"*.log"))
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, path := range logs {
		if lines, err = appendMatching(lines, path, failOpenMarker, limit); err != nil {
			return lines, err
		}
	}
	return lines, nil
}

// appendMatching appends the lines of the file at path that contain s to
// lines, until lines holds limit of them.
func appendMatching(lines []string, path, s string, limit int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return lines, err
	}
	defer func() { _ = f.Close() }() // read only: a close error loses nothing
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() && len(lines) < limit {
		if strings.Contains(sc.Text(), s) {
			lines = append(lines, sc.Text())
		}
	}
	return lines, sc.Err()
}
