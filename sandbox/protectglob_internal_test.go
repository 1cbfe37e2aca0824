package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Protected wildcard entries: "*" within names through filepath.Glob,
// "**" by a walk that stops at a match.
func TestGlobMatches(t *testing.T) {
	ws := t.TempDir()
	for _, f := range []string{".env", "a/.env", "a/b/.env/inner", "ci/x.yml", "ci/sub/y.yml", "link/.env"} {
		path := filepath.Join(ws, f)
		if f == "link/.env" {
			if err := os.Symlink(filepath.Join(ws, "a"), filepath.Join(ws, "link")); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		rel  string
		want []string
	}{
		{"**/.env", []string{".env", "a/.env", "a/b/.env"}}, // not through the symlink, nothing beneath a/b/.env
		{"ci/*.yml", []string{"ci/x.yml"}},
		{"ci/**/*.yml", []string{"ci/sub/y.yml", "ci/x.yml"}},
		{"none/**", nil},
	}
	for _, tt := range tests {
		var got []string
		for _, m := range globMatches(ws, tt.rel) {
			rel, _ := filepath.Rel(ws, m)
			got = append(got, rel)
		}
		slices.Sort(got)
		if !slices.Equal(got, tt.want) {
			t.Errorf("globMatches(%q) = %q, want %q", tt.rel, got, tt.want)
		}
	}
}
