package profile

import (
	"path/filepath"
	"testing"
)

// TestAnyDepthProtected: a "**/NAME" entry protects NAME at any depth of
// the workspace and nothing beside it; a ** anywhere else is refused.
func TestAnyDepthProtected(t *testing.T) {
	ws := t.TempDir()
	spec := Preset("workspace")
	spec.Workspace = ws
	p, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rel  string
		want bool
	}{
		{".vscode/tasks.json", true},
		{"sub/.vscode/tasks.json", true},
		{"a/b/c/.envrc", true},
		{"pkg/.claude", true},
		{"pkg/.mcp.json", true},
		{".pre-commit-config.yaml", true},
		{"lefthook.yml", true},
		{"sub/vscode/tasks.json", false},
		{"sub/.envrc.example", false},
		{"sub/.pre-commit-config.yaml", false},
		{"src/main.go", false},
	} {
		if got := p.IsProtected(filepath.Join(ws, tc.rel)); got != tc.want {
			t.Errorf("IsProtected(%s) = %v, want %v", tc.rel, got, tc.want)
		}
	}
	if !p.ProtectedBeneath(ws) || p.ProtectedBeneath(filepath.Join(ws, "src")) {
		t.Error("ProtectedBeneath: the workspace holds protected paths, src/ is not taken for one")
	}
	for _, bad := range []string{"a/**/b", "**/a/b", "**", "**/*.json"} {
		s := Preset("workspace")
		s.Workspace = ws
		s.Filesystem.Protected = append(s.Filesystem.Protected, bad)
		if _, err := New(s); err == nil {
			t.Errorf("protected entry %q was accepted", bad)
		}
	}
}
