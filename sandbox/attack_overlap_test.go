package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/sandbox"
)

// overlapPlant is what a run tries once the other run has ended: the
// names its placeholders hold, written as a host tool would run them.
const overlapPlant = `mkdir -p .claude .vscode; echo '{"hooks":{}}' > .claude/settings.json; ` +
	`echo '{"tasks":[]}' > .vscode/tasks.json; echo 'touch pwned' > .envrc; `

// overlapPlanted are the host-side evidence of overlapPlant.
var overlapPlanted = []string{".claude/settings.json", ".vscode/tasks.json", ".envrc"}

// startSignalled starts script in sb and waits for it to touch name.
func startSignalled(t *testing.T, sb *sandboxtest.Sandbox, name, script string) *sandbox.Process {
	t.Helper()
	proc, err := sb.Executor.Prepare(t.Context(), sandbox.Cmd{Args: sandboxtest.Sh(script), Timeout: 2 * time.Minute})
	must(t, err)
	must(t, proc.Start())
	if !waitFile(filepath.Join(sb.Workspace, name)) {
		proc.Kill()
		res, err := proc.Wait()
		t.Fatalf("the run never touched %s: %v %+v", name, err, res)
	}
	return proc
}

// planted reports whether rel is a regular file (a placeholder is a
// directory).
func planted(ws, rel string) bool {
	fi, err := os.Lstat(filepath.Join(ws, rel))
	return err == nil && fi.Mode().IsRegular()
}

func waitFile(path string) bool {
	for i := 0; i < 1200 && !sandboxtest.Exists(path); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	return sandboxtest.Exists(path)
}

// TestAttackOverlappingRuns: two runs in one workspace at once, the
// later one started while the earlier one's placeholders stand (without
// the create guard; with it, the guard holds the names and no
// placeholder is made). Whichever ends first, the one still going cannot
// make .claude/settings.json, .vscode/tasks.json or .envrc, and once
// both ended nothing of theirs is left at the top of the workspace: not
// what was planted, not a placeholder.
func TestAttackOverlappingRuns(t *testing.T) {
	withAndWithoutGuard(t, overlappingRuns)
}

// withAndWithoutGuard runs test twice: under the create guard ("guard";
// skipped on a host without one) and with it turned off
// ("placeholders"), the way a host without seccomp user notification
// runs.
func withAndWithoutGuard(t *testing.T, test func(t *testing.T, guard bool)) {
	for _, guard := range []bool{true, false} {
		name := "guard"
		if !guard {
			name = "placeholders"
		}
		t.Run(name, func(t *testing.T) {
			if !guard {
				t.Cleanup(sandbox.SetCreateGuardForTest(false))
			} else if h := sandboxtest.New(t, preset, sandboxtest.Workspace(t), nil).Executor.Report().Host; !h.CreateGuard {
				t.Skip("no create guard on this host: " + h.CreateGuardReason)
			}
			test(t, guard)
		})
	}
}

func overlappingRuns(t *testing.T, guard bool) {
	// The run that plants waits for "go", which the test makes once the
	// other run has ended.
	const planter = `touch ready-%s; while [ ! -e go ]; do sleep 0.05; done; ` + overlapPlant + `touch planted; sleep 60`
	const idle = `touch ready-%s; sleep 60`
	for _, tc := range []struct {
		name string
		// firstPlants: the earlier run is the one still going when the
		// other ends (the later one ends first).
		firstPlants bool
	}{
		{name: "earlier-ends-first"},
		{name: "later-ends-first", firstPlants: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := sandboxtest.Workspace(t)
			before := topEntries(t, ws)
			sb := sandboxtest.New(t, preset, ws, nil)
			first, second := idle, planter
			if tc.firstPlants {
				first, second = planter, idle
			}
			a := startSignalled(t, sb, "ready-a", strings.ReplaceAll(first, "%s", "a"))
			b := startSignalled(t, sb, "ready-b", strings.ReplaceAll(second, "%s", "b"))
			ender, planting := a, b
			if tc.firstPlants {
				ender, planting = b, a
			}
			ender.Kill()
			if _, err := ender.Wait(); err != nil {
				t.Fatalf("the run that ended first: %v", err)
			}
			// The run still going keeps its placeholders: the host sees
			// them, empty. With the guard the names stay absent.
			for _, name := range []string{".claude", ".vscode", ".envrc"} {
				fi, err := os.Lstat(filepath.Join(ws, name))
				if guard && !os.IsNotExist(err) {
					t.Errorf("%s while the other run goes on, under the create guard: %v %v", name, fi, err)
				}
				if !guard && (err != nil || !fi.IsDir()) {
					t.Errorf("placeholder %s while the other run goes on: %v %v", name, fi, err)
				}
			}
			must(t, os.WriteFile(filepath.Join(ws, "go"), nil, 0o644))
			if !waitFile(filepath.Join(ws, "planted")) {
				planting.Kill()
				res, err := planting.Wait()
				t.Fatalf("the planting run never finished its script: %v %+v", err, res)
			}
			for _, rel := range overlapPlanted {
				if planted(ws, rel) {
					t.Errorf("ATTACK SUCCEEDED: %s exists on the host while the run goes on", rel)
				}
			}
			planting.Kill()
			res, err := planting.Wait()
			if err != nil {
				t.Fatalf("the run that ended last: %v", err)
			}
			for _, rel := range overlapPlanted {
				if planted(ws, rel) {
					t.Errorf("ATTACK SUCCEEDED: %s exists on the host after both runs", rel)
				}
			}
			for _, f := range []string{"ready-a", "ready-b", "go", "planted"} {
				os.Remove(filepath.Join(ws, f))
			}
			if after := topEntries(t, ws); strings.Join(after, " ") != strings.Join(before, " ") {
				t.Errorf("workspace top level after both runs %v, before %v; denials %+v", after, before, res.Denials)
			}
			// Control: the same script on the host plants all three.
			sb.Host(t, sandboxtest.Probe{Args: sandboxtest.Sh(overlapPlant)})
			for _, rel := range overlapPlanted {
				if !planted(ws, rel) {
					t.Errorf("positive control failed: the script on the host did not make %s", rel)
				}
			}
		})
	}
}
