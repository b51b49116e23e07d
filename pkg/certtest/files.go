package certtest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The keys of a certificate Secret, as cert-management and cert-manager
// write them, and the names of the files kubelet projects them into.
const (
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
	CAFile   = "ca.crt"
)

// Files returns c as a certificate Secret's data, or its volume's files:
// tls.crt, tls.key and ca.crt.
func (c *Cert) Files() map[string][]byte {
	return map[string][]byte{CertFile: c.CertPEM, KeyFile: c.KeyPEM, CAFile: c.CAPEM}
}

// WriteAtomic updates dir as kubelet's AtomicWriter updates a Secret
// volume: the files go to a new timestamped directory, a ..data_tmp symlink
// to it is renamed over ..data in one step, each visible name is a symlink
// to ..data/<name>, and the previous timestamped directory is removed.
func WriteAtomic(dir string, files map[string][]byte) error {
	now := time.Now().UTC()
	ts := fmt.Sprintf("..%s.%09d", now.Format("2006_01_02_15_04_05"), now.Nanosecond())
	if err := os.Mkdir(filepath.Join(dir, ts), 0o755); err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, ts, name), data, 0o644); err != nil {
			return err
		}
	}
	old, _ := os.Readlink(filepath.Join(dir, "..data")) // absent on the first write
	tmp := filepath.Join(dir, "..data_tmp")
	if err := os.Symlink(ts, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		return err
	}
	for name := range files {
		link := filepath.Join(dir, name)
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink(filepath.Join("..data", name), link); err != nil {
			return err
		}
	}
	if old != "" {
		return os.RemoveAll(filepath.Join(dir, old))
	}
	return nil
}

// MustWriteAtomic is WriteAtomic that fails t on error.
func MustWriteAtomic(t testing.TB, dir string, files map[string][]byte) {
	t.Helper()
	if err := WriteAtomic(dir, files); err != nil {
		t.Fatal(err)
	}
}
