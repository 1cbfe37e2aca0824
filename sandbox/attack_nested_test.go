package sandbox_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// TestAttackProtectedNamesBelowTop: the agents' and editors' settings
// and direnv's .envrc below the top of the workspace, and the hook
// managers' configs the git hooks delegate to, are held like the
// top-level names: one there at the start stays as it was (read-only),
// and none can be made. The evidence is on the host after the run; the
// control runs the same script on the host and makes them all.
func TestAttackProtectedNamesBelowTop(t *testing.T) {
	const plant = `mkdir -p pkg/deep; echo '{"tasks":[]}' > sub/.vscode/tasks.json; echo '{}' > sub/.vscode/settings.json; ` +
		`mkdir -p pkg/.vscode; echo '{"tasks":[]}' > pkg/.vscode/tasks.json; echo 'touch pwned' > pkg/deep/.envrc; ` +
		`mkdir -p pkg/.claude; echo '{"hooks":{}}' > pkg/.claude/settings.json; echo '{"mcpServers":{}}' > pkg/.mcp.json; ` +
		`echo 'repos: [{repo: local, hooks: [{id: x, entry: touch pwned, language: system}]}]' > .pre-commit-config.yaml; ` +
		`echo 'pre-commit: {commands: {x: {run: touch pwned}}}' > lefthook.yml; echo 'pre-commit: {commands: {x: {run: touch pwned}}}' > .lefthook.yml; ` +
		`mv sub/.vscode sub/old; mkdir -p sub/.vscode; echo '{"tasks":[]}' > sub/.vscode/tasks.json; `
	for _, guard := range []bool{true, false} {
		name := "with-create-guard"
		if !guard {
			// The backstop: the end of the run moves aside what it made.
			name = "without-create-guard"
		}
		t.Run(name, func(t *testing.T) {
			if !guard {
				t.Cleanup(sandbox.SetCreateGuardForTest(false))
			}
			attackNestedNames(t, plant, guard)
		})
	}
}

func attackNestedNames(t *testing.T, plant string, guard bool) {
	planted := []string{"sub/.vscode/tasks.json", "pkg/.vscode/tasks.json", "pkg/deep/.envrc", "pkg/.claude/settings.json", "pkg/.mcp.json",
		".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml"}
	ws := sandboxtest.Workspace(t)
	settings := filepath.Join(ws, "sub", ".vscode", "settings.json")
	must(t, os.MkdirAll(filepath.Dir(settings), 0o755))
	must(t, os.WriteFile(settings, []byte("mine\n"), 0o644))
	sb := sandboxtest.New(t, preset, ws, nil)
	if guard && sb.Degraded(profile.ProtectedPaths) {
		t.Skip("no create guard on this host")
	}
	o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Sh(plant)})
	for _, rel := range planted {
		if fi, err := os.Lstat(filepath.Join(ws, rel)); err == nil && fi.Mode().IsRegular() {
			t.Errorf("ATTACK SUCCEEDED: %s exists on the host after the run\n%s", rel, o)
		}
	}
	if data, err := os.ReadFile(settings); err != nil || string(data) != "mine\n" {
		t.Errorf("sub/.vscode/settings.json there at the start changed: %q %v", data, err)
	}
	t.Logf("denials: %+v", o.Result.Denials)
	if len(o.Result.Denials) == 0 {
		t.Errorf("no denial names what was refused\n%s", o)
	}
	// Control: the same script on the host makes every one of them.
	os.RemoveAll(filepath.Join(ws, "pkg"))
	os.RemoveAll(filepath.Join(ws, "sub", "old"))
	sb.Host(t, sandboxtest.Probe{Args: sandboxtest.Sh(plant)})
	for _, rel := range planted {
		if fi, err := os.Lstat(filepath.Join(ws, rel)); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("positive control failed: the script on the host did not make %s: %v", rel, err)
		}
	}
}
