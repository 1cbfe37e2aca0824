package sandbox

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestSameBuild: a helper's build information matches only the build of
// this module it came from: one difference in the toolchain, the module,
// a build setting or a linked module's version is another build.
func TestSameBuild(t *testing.T) {
	own := func() *debug.BuildInfo {
		return &debug.BuildInfo{
			GoVersion: "go1.26.8",
			Path:      "github.com/airlockhq/airlock/cmd/airlock",
			Main:      debug.Module{Path: airlockModule, Version: "(devel)"},
			Deps: []*debug.Module{
				{Path: "golang.org/x/sys", Version: "v0.50.0", Sum: "h1:a"},
				{Path: "modernc.org/sqlite", Version: "v1.0.0", Sum: "h1:b"},
			},
			Settings: []debug.BuildSetting{{Key: "CGO_ENABLED", Value: "0"}, {Key: "-trimpath", Value: "true"}, {Key: "vcs.revision", Value: "abc"}},
		}
	}
	helper := func() *debug.BuildInfo {
		bi := own()
		bi.Path = helperPackage
		bi.Deps = bi.Deps[:1]
		return bi
	}
	for _, tc := range []struct {
		name   string
		change func(own, helper *debug.BuildInfo)
		want   string // "" for the same build
	}{
		{"same build", func(o, h *debug.BuildInfo) {}, ""},
		{"a library's program links the module", func(o, h *debug.BuildInfo) {
			o.Path, o.Main = "example.com/tool", debug.Module{Path: "example.com/tool", Version: "(devel)"}
			o.Deps = append(o.Deps, &debug.Module{Path: airlockModule, Version: "v1.2.0", Sum: "h1:c"})
			h.Main = debug.Module{Path: airlockModule, Version: "v1.2.0", Sum: "h1:c"}
		}, ""},
		{"another program", func(o, h *debug.BuildInfo) { h.Path = "github.com/airlockhq/airlock/cmd/airlock-server" }, "not github.com/airlockhq/airlock/cmd/airlock-sandbox"},
		{"another toolchain", func(o, h *debug.BuildInfo) { h.GoVersion = "go1.26.7" }, "built with go1.26.7"},
		{"another module", func(o, h *debug.BuildInfo) { h.Main.Path = "example.com/airlock" }, "module example.com/airlock"},
		{"another version", func(o, h *debug.BuildInfo) { h.Main.Version = "v1.0.0" }, "module github.com/airlockhq/airlock v1.0.0"},
		{"another revision", func(o, h *debug.BuildInfo) { h.Settings[2].Value = "abd" }, "vcs.revision"},
		{"a setting more", func(o, h *debug.BuildInfo) {
			h.Settings = append(h.Settings, debug.BuildSetting{Key: "-ldflags", Value: "-X=main.x=y"})
		}, "build settings"},
		{"a setting changed", func(o, h *debug.BuildInfo) { h.Settings[0].Value = "1" }, "CGO_ENABLED"},
		{"another dependency version", func(o, h *debug.BuildInfo) { h.Deps[0] = &debug.Module{Path: "golang.org/x/sys", Version: "v0.49.0"} }, "golang.org/x/sys v0.49.0"},
		{"a dependency this program lacks", func(o, h *debug.BuildInfo) {
			h.Deps = append(h.Deps, &debug.Module{Path: "example.com/evil", Version: "v1.0.0"})
		}, "example.com/evil"},
		{"a replaced dependency", func(o, h *debug.BuildInfo) {
			h.Deps[0] = &debug.Module{Path: "golang.org/x/sys", Version: "v0.50.0", Sum: "h1:a", Replace: &debug.Module{Path: "../sys"}}
		}, "golang.org/x/sys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, h := own(), helper()
			tc.change(o, h)
			err := sameBuild(o, h)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("sameBuild: %v; want the same build", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("sameBuild: %v; want an error naming %q", err, tc.want)
			}
		})
	}
}

// TestReadBuildInfo reads the build information of this test binary from
// its file as the runtime sees it, and refuses files that are not Go
// programs.
func TestReadBuildInfo(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := readBuildInfo(f)
	if err != nil {
		t.Fatalf("readBuildInfo(%s): %v", exe, err)
	}
	want, _ := debug.ReadBuildInfo()
	if got.String() != want.String() {
		t.Errorf("from the file:\n%s\nfrom the runtime:\n%s", got, want)
	}

	dir := t.TempDir()
	elf, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"empty":     nil,
		"script":    []byte("#!/bin/sh\ntouch /tmp/x\n"),
		"C program": elf,
		"truncated": head(t, exe, 4096),
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(path, data, 0o755); err != nil {
			t.Fatal(err)
		}
		h := openHelper(path)
		if h.file != nil || h.path != selfExe || h.fallback == "" {
			t.Errorf("%s as the helper: %+v; want the fallback with its reason", name, h)
		}
	}
}

// head is the first n bytes of the file at path.
func head(t *testing.T, path string, n int) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data[:n]
}
