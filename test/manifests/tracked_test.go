package manifests

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// elfMagic opens every Linux executable and shared object.
var elfMagic = []byte("\x7fELF")

// The repository holds sources, not what they build: a binary that `go
// build` leaves in a tool's folder would ship unreviewable bytes in every
// clone. make builds into bin/, which git ignores.
func TestRepositoryTracksNoBuiltBinary(t *testing.T) {
	root := tools.MustRepoRoot(t)
	r, err := process.Command{Dir: root}.Run(t.Context(), "git", "ls-files", "-z")
	if err != nil {
		if tools.InCI() {
			t.Fatal(err)
		}
		t.Skipf("not a git checkout: %v", err)
	}
	files := bytes.Split(bytes.TrimSuffix([]byte(r.Stdout), []byte{0}), []byte{0})
	if len(files) < 100 {
		t.Fatalf("git ls-files listed %d files, want the whole repository", len(files))
	}
	for _, f := range files {
		head := make([]byte, len(elfMagic))
		fh, err := os.Open(filepath.Join(root, string(f)))
		if err != nil {
			continue // deleted in the work tree
		}
		n, _ := fh.Read(head)
		_ = fh.Close()
		if bytes.Equal(head[:n], elfMagic) {
			t.Errorf("%s is a built binary: remove it with git rm --cached and build into bin/", f)
		}
	}
}
