package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// staticELF writes the smallest statically linked ELF executable of
// runtime.GOARCH that writeArchive accepts, an ELF header and one PT_LOAD
// segment, to pack without building anything.
func staticELF(t *testing.T) string {
	t.Helper()
	machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64, "s390x": elf.EM_S390, "ppc64le": elf.EM_PPC64}[runtime.GOARCH]
	if machine == 0 {
		t.Skipf("no ELF machine for %s", runtime.GOARCH)
	}
	var order binary.ByteOrder = binary.LittleEndian
	data := byte(elf.ELFDATA2LSB)
	if runtime.GOARCH == "s390x" {
		order, data = binary.BigEndian, byte(elf.ELFDATA2MSB)
	}
	const ehsize, phsize = 64, 56
	var b bytes.Buffer
	ident := [elf.EI_NIDENT]byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), data, byte(elf.EV_CURRENT)}
	hdr := elf.Header64{Ident: ident, Type: uint16(elf.ET_EXEC), Machine: uint16(machine), Version: uint32(elf.EV_CURRENT),
		Entry: 0x400000 + ehsize + phsize, Phoff: ehsize, Ehsize: ehsize, Phentsize: phsize, Phnum: 1, Shentsize: 64}
	prog := elf.Prog64{Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_X), Vaddr: 0x400000, Paddr: 0x400000,
		Filesz: ehsize + phsize, Memsz: ehsize + phsize, Align: 0x1000}
	if err := binary.Write(&b, order, hdr); err != nil {
		t.Fatal(err)
	}
	if err := binary.Write(&b, order, prog); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "static")
	if err := os.WriteFile(path, b.Bytes(), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestWriteArchiveIsReproducibleWithTheSpecsConfigAndOneLayer(t *testing.T) {
	bin := staticELF(t)
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
	img := readImage(t, first, "pause:e2e")
	checkConfig(t, img, spec)
	checkLayer(t, img, bin)
}

// readImage reads the image tag from the archive at path.
func readImage(t *testing.T, path, tag string) v1.Image {
	t.Helper()
	ref, err := name.NewTag(tag)
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(path, &ref)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// checkConfig wants the image built for linux on this architecture at the
// epoch, with the spec's user, entrypoint and labels.
func checkConfig(t *testing.T, img v1.Image, spec imageSpec) {
	t.Helper()
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
}

// checkLayer wants one layer that holds the binary at /usr/bin/pause and
// the directories above it, owned by root, mode 0755.
func checkLayer(t *testing.T, img v1.Image, bin string) {
	t.Helper()
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

func TestWriteArchiveRefusesWhatTheImageCannotRun(t *testing.T) {
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
		{name: "dynamically_linked_binary_is_refused", binary: sh, path: "/sh", wantErr: "dynamically linked"},
		{name: "not_a_binary_is_refused", binary: "main.go", path: "/x", wantErr: "not an ELF"},
		{name: "relative_path_is_refused", binary: sh, path: "sh", wantErr: "absolute"},
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
