package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestProfilesDocExamples: what docs/PROFILES.md and README.md show works
// when pasted. Every ```toml block is used as it stands, both as a
// --profile file and as the workspace's .airlock/profile.toml, and every
// `--net ...` example (templates with HOST or ... aside) builds a profile.
func TestProfilesDocExamples(t *testing.T) {
	var blocks, nets []string
	for _, doc := range []string{"../../docs/PROFILES.md", "../../README.md"} {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		// README's toml is a policy file (docs/POLICY.md), not a profile.
		for _, m := range regexp.MustCompile("(?s)```toml\n(.*?)```").FindAllStringSubmatch(text, -1) {
			if strings.HasSuffix(doc, "PROFILES.md") {
				blocks = append(blocks, m[1])
			}
		}
		for _, m := range regexp.MustCompile("`--net ([^`]*)`").FindAllStringSubmatch(text, -1) {
			if !strings.Contains(m[1], "HOST") && !strings.Contains(m[1], "...") {
				nets = append(nets, m[1])
			}
		}
	}
	if len(blocks) == 0 || len(nets) == 0 {
		t.Fatalf("found %d toml blocks and %d --net examples: the extraction is broken", len(blocks), len(nets))
	}
	for i, b := range blocks {
		ws := t.TempDir()
		file := filepath.Join(t.TempDir(), "example.toml")
		writeFile(t, file, b)
		pf := parsedProfileFlags(t, "--workspace", ws, "--profile", file)
		if _, err := pf.Build(); err != nil {
			t.Errorf("toml example %d as --profile: %v\n%s", i+1, err, b)
		}
		writeFile(t, filepath.Join(ws, ".airlock/profile.toml"), b)
		pf = parsedProfileFlags(t, "--workspace", ws)
		if _, err := pf.Build(); err != nil {
			t.Errorf("toml example %d as .airlock/profile.toml: %v", i+1, err)
		}
	}
	for _, n := range nets {
		pf := parsedProfileFlags(t, "--workspace", t.TempDir(), "--net", n)
		if _, err := pf.Build(); err != nil {
			t.Errorf("--net %s: %v", n, err)
		}
	}
}
