package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/cli"
	"github.com/airlockhq/airlock/profile"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// parsedProfileFlags are the profile flags as args on a command line
// set them.
func parsedProfileFlags(t *testing.T, args ...string) *cli.ProfileFlags {
	t.Helper()
	var pf cli.ProfileFlags
	fs := flag.NewFlagSet("airlock run", flag.ContinueOnError)
	pf.Register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return &pf
}

// TestProfileLayers: a --profile file that names a preset goes over the
// workspace's .airlock/profile.toml instead of discarding it, --net HOST
// adds to the files' allowlists, and doctor and --report name both files.
func TestProfileLayers(t *testing.T) {
	ws := t.TempDir()
	wsFile := filepath.Join(ws, profile.WorkspaceFile)
	writeFile(t, wsFile, `
[filesystem]
deny = ["secret.txt"]
[network]
mode = "allow"
allow = ["a.example"]
[budgets]
memory = "2GiB"
`)
	other := filepath.Join(t.TempDir(), "strict.toml")
	writeFile(t, other, `
preset = "strict"
[network]
mode = "allow"
allow = ["b.example"]
`)
	pf := parsedProfileFlags(t, "--workspace", ws, "--profile", other, "--net", "c.example")
	pol, err := pf.Load()
	if err != nil {
		t.Fatal(err)
	}
	p := pol.Profile
	s := p.Spec()
	if s.Preset != "strict" || len(s.Filesystem.Exec) == 0 {
		t.Errorf("preset %q, exec %v: want strict's exec list", s.Preset, s.Filesystem.Exec)
	}
	if !slices.ContainsFunc(s.Filesystem.Deny, func(d string) bool { return strings.HasSuffix(d, "secret.txt") }) {
		t.Errorf("deny %v: the workspace file's entry was discarded", s.Filesystem.Deny)
	}
	if s.Budgets.Memory != 2<<30 {
		t.Errorf("memory %v: want the workspace file's 2GiB over the preset's", s.Budgets.Memory)
	}
	for _, h := range []string{"a.example", "b.example", "c.example"} {
		if !slices.Contains(s.Network.Allow, h) {
			t.Errorf("network.allow %v: %s missing", s.Network.Allow, h)
		}
	}
	if want := []string{wsFile, other}; !slices.Equal(pol.ProfileFiles, want) {
		t.Errorf("loaded %v, want %v", pol.ProfileFiles, want)
	}
	// --net none replaces the allowlist rather than adding to it.
	pf = parsedProfileFlags(t, "--workspace", ws, "--net", "none")
	if p, err = pf.Build(); err != nil || p.Spec().Network.Mode != "none" || len(p.Spec().Network.Allow) != 0 {
		t.Errorf("--net none over an allowlist: %v, %+v", err, p.Spec().Network)
	}

	var so, se strings.Builder
	dispatch([]string{"doctor", "--json", "--workspace", ws, "--profile", other}, &so, &se)
	var doc struct {
		Files []string `json:"profile_files"`
	}
	if err := json.Unmarshal([]byte(so.String()), &doc); err != nil || !slices.Equal(doc.Files, []string{wsFile, other}) {
		t.Errorf("doctor --json profile_files %v (%v); stdout %.300s", doc.Files, err, so.String())
	}
	so.Reset()
	dispatch([]string{"doctor", "--workspace", ws, "--profile", other}, &so, &se)
	if !strings.Contains(so.String(), wsFile+", "+other) {
		t.Errorf("doctor does not name both files:\n%s", so.String())
	}

	report := filepath.Join(t.TempDir(), "r.json")
	so.Reset()
	se.Reset()
	if code := dispatch([]string{"run", "--workspace", ws, "--profile", other, "--report", report, "--", "true"}, &so, &se); code != 0 {
		t.Fatalf("run: exit %d, stderr %q", code, se.String())
	}
	data, _ := os.ReadFile(report)
	if err := json.Unmarshal(data, &doc); err != nil || !slices.Equal(doc.Files, []string{wsFile, other}) {
		t.Errorf("--report profile_files %v (%v)", doc.Files, err)
	}
}
