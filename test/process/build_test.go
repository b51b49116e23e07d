package process

import (
	"context"
	"debug/buildinfo"
	"debug/elf"
	"path/filepath"
	"runtime"
	"testing"
)

// A folder of a main package builds with the flags of the shipped
// binaries, in the module that holds it, named after the folder: the
// main module's (a baseline of test/bench) and hack/tools' (imagetool's
// probe).
func TestBuildBuildsAFolderAsTheShippedBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two binaries")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads the ELF binaries it builds")
	}
	for _, tc := range []struct{ target, module string }{
		{target: "test/bench/cmd/peak-rss", module: "github.com/kyma-project/kim-snatch"},
		{target: "hack/tools/imagetool/probe", module: "github.com/kyma-project/kim-snatch/hack/tools"},
	} {
		t.Run(filepath.Base(tc.target), func(t *testing.T) {
			dir := t.TempDir()
			bin, err := Build(context.Background(), tc.target, dir)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(dir, filepath.Base(tc.target)); bin != want {
				t.Fatalf("Build returned %s, want %s", bin, want)
			}
			info, err := buildinfo.ReadFile(bin)
			if err != nil {
				t.Fatal(err)
			}
			if info.Main.Path != tc.module {
				t.Errorf("built in module %s, want %s", info.Main.Path, tc.module)
			}
			settings := map[string]string{}
			for _, s := range info.Settings {
				settings[s.Key] = s.Value
			}
			for key, want := range map[string]string{"CGO_ENABLED": "0", "-trimpath": "true"} {
				if settings[key] != want {
					t.Errorf("build setting %s=%q, want %q", key, settings[key], want)
				}
			}
			f, err := elf.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Section(".symtab") != nil {
				t.Error("the binary has a symbol table; want it stripped (-s -w)")
			}
		})
	}
}
