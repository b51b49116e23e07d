package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// epoch is every timestamp in the image, so that the same binary gives the
// same archive.
var epoch = time.Unix(0, 0).UTC()

// writeArchive writes the image of binary with spec to out as a docker
// archive that names the image tag.
func writeArchive(out, tag, binary string, spec imageSpec) error {
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("-tag %q: %w", tag, err)
	}
	img, err := buildImage(binary, spec)
	if err != nil {
		return err
	}
	// Written beside out and renamed, so that a failed write leaves no
	// archive that looks whole.
	tmp, err := os.CreateTemp(path.Dir(out), ".imagetool-*.tar")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tarball.Write(ref, img, tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", out, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), out)
}

// buildImage makes the one-layer image of binary: the layer holds the
// binary at spec.Path, owned by root and mode 0755 as COPY leaves it, with
// the directories above it.
func buildImage(binary string, spec imageSpec) (v1.Image, error) {
	if !path.IsAbs(spec.Path) || path.Clean(spec.Path) != spec.Path || spec.Path == "/" {
		return nil, fmt.Errorf("the binary's path in the image %q is not a clean absolute file path", spec.Path)
	}
	data, err := os.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	arch, err := staticArch(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", binary, err)
	}
	layerTar, err := layerOf(spec.Path, data)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	})
	if err != nil {
		return nil, err
	}
	img, err := mutate.Append(empty.Image, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   v1.Time{Time: epoch},
			CreatedBy: "COPY " + path.Base(binary) + " " + spec.Path,
		},
	})
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS = "linux"
	cfg.Architecture = arch
	cfg.Created = v1.Time{Time: epoch}
	cfg.Config.User = spec.User
	cfg.Config.Entrypoint = spec.Entrypoint
	cfg.Config.Cmd = spec.Cmd
	cfg.Config.Env = spec.Env
	cfg.Config.WorkingDir = spec.WorkingDir
	if len(spec.Labels) > 0 {
		cfg.Config.Labels = spec.Labels
	}
	return mutate.ConfigFile(img, cfg)
}

// layerOf is an uncompressed layer tar holding data at file (absolute), and
// each directory above it.
func layerOf(file string, data []byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	rel := strings.TrimPrefix(file, "/")
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		if err := tw.WriteHeader(&tar.Header{
			Typeflag: tar.TypeDir,
			Name:     strings.Join(parts[:i], "/") + "/",
			Mode:     0o755,
			ModTime:  epoch,
			Format:   tar.FormatPAX,
		}); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{
		Typeflag: tar.TypeReg,
		Name:     rel,
		Mode:     0o755,
		Size:     int64(len(data)),
		ModTime:  epoch,
		Format:   tar.FormatPAX,
	}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(data); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// staticArch returns the GOARCH of a statically linked Linux ELF binary.
// The image has no libc and no loader, so a dynamically linked binary
// could not start in it.
func staticArch(data []byte) (string, error) {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return "", fmt.Errorf("not an ELF binary: %w", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			return "", fmt.Errorf("dynamically linked (%s); build it with CGO_ENABLED=0", p.Type)
		}
	}
	arch, ok := map[elf.Machine]string{
		elf.EM_X86_64:  "amd64",
		elf.EM_AARCH64: "arm64",
		elf.EM_S390:    "s390x",
		elf.EM_PPC64:   "ppc64le",
	}[f.Machine]
	if !ok || f.Class != elf.ELFCLASS64 || f.Machine == elf.EM_PPC64 && f.Data != elf.ELFDATA2LSB {
		return "", fmt.Errorf("machine %s %s is not one of amd64, arm64, s390x, ppc64le", f.Class, f.Machine)
	}
	return arch, nil
}
