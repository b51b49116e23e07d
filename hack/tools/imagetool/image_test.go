package main

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// buildPause builds ./pause as make images does, as a small static binary
// to pack.
func buildPause(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "pause")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "./pause")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./pause: %v\n%s", err, b)
	}
	return out
}

func TestWriteArchive(t *testing.T) {
	bin := buildPause(t)
	spec := imageSpec{
		Path:       "/usr/bin/pause",
		Entrypoint: []string{"/usr/bin/pause"},
		User:       "65535:65535",
		Labels:     map[string]string{"a": "b"},
	}
	dir := t.TempDir()
	first, second := filepath.Join(dir, "1.tar"), filepath.Join(dir, "2.tar")
	for _, out := range []string{first, second} {
		if err := writeArchive(out, "pause:e2e", bin, spec); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := os.ReadFile(first)
	b, _ := os.ReadFile(second)
	if !bytes.Equal(a, b) {
		t.Error("two archives of the same binary differ; the output is not reproducible")
	}

	tag, _ := name.NewTag("pause:e2e")
	img, err := tarball.ImageFromPath(first, &tag)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.OS != "linux" || cfg.Architecture != runtime.GOARCH || !cfg.Created.Time.Equal(epoch) {
		t.Errorf("os %s, architecture %s, created %s; want linux, %s, the epoch", cfg.OS, cfg.Architecture, cfg.Created, runtime.GOARCH)
	}
	if cfg.Config.User != spec.User || !reflect.DeepEqual(cfg.Config.Entrypoint, spec.Entrypoint) || !reflect.DeepEqual(cfg.Config.Labels, spec.Labels) {
		t.Errorf("config %+v, want user, entrypoint and labels of %+v", cfg.Config, spec)
	}

	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers (%v), want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	want, _ := os.ReadFile(bin)
	var names []string
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Uid != 0 || h.Gid != 0 || h.Mode != 0o755 {
			t.Errorf("%s: owner %d:%d mode %o, want 0:0 0755 as COPY leaves it", h.Name, h.Uid, h.Gid, h.Mode)
		}
		if h.Typeflag == tar.TypeReg {
			got, _ := io.ReadAll(tr)
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the binary", h.Name)
			}
		}
	}
	if !reflect.DeepEqual(names, []string{"usr/", "usr/bin/", "usr/bin/pause"}) {
		t.Errorf("layer holds %q, want the binary and the directories above it", names)
	}
}

func TestWriteArchiveRefuses(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to stand for a dynamically linked binary")
	}
	sh, _ = filepath.EvalSymlinks(sh)
	tests := []struct {
		name    string
		binary  string
		path    string
		wantErr string
	}{
		{name: "dynamically_linked_binary", binary: sh, path: "/sh", wantErr: "dynamically linked"},
		{name: "not_a_binary", binary: "main.go", path: "/x", wantErr: "not an ELF"},
		{name: "relative_path", binary: sh, path: "sh", wantErr: "absolute"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.tar")
			err := writeArchive(out, "x:e2e", tt.binary, imageSpec{Path: tt.path})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%s was written anyway", out)
			}
		})
	}
}
