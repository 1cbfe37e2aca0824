package sandbox_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// TestAttackNoSilentLimit: a workspace with more entries than the
// start once searched for repositories (20,000; a real node_modules has
// 100k) puts a nested repository beyond that search. With the create
// guard nothing is searched: the guard refuses what git config, a
// shell's >>, sed -i and a new hook do to that repository's config and
// hooks when the call comes, host git there runs no program of the
// run's, and protected-paths stays enforced (a profile that requires it
// runs). Without the guard the search is still bounded: the Report says
// protected-paths is degraded and why, a profile that requires it does
// not run, and the end-of-run search says it was cut short. The control
// runs the same script on the host and the marker appears.
func TestAttackNoSilentLimit(t *testing.T) {
	sandboxtest.PlantSecrets(t)
	ws := sandboxtest.GitWorkspace(t)
	repo := repoBeyondSearchBound(t, ws)

	sb := sandboxtest.New(t, preset, ws, nil)
	marker := filepath.Join(sandboxtest.OutsideDir(t), "ran")
	p := sandboxtest.Probe{Args: sandboxtest.Sh(gitPrelude+`cd b/c/repo; git config core.fsmonitor "$fsm"; printf '[core]\n\tfsmonitor = %s\n' "$fsm" >> .git/config; mk .git/hooks/pre-commit; mk .git/hooks/post-commit; sed -i "s|^\[core\]|[core]\n\tfsmonitor = $fsm|" .git/config`, marker)}
	guard := sb.Executor.Report().Status(profile.ProtectedPaths).Status == sandbox.Enforced
	req := sandboxtest.New(t, preset, ws, func(s *profile.Spec) { s.Require = append(s.Require, profile.ProtectedPaths.String()) })
	if guard {
		o := sb.Run(t, p)
		if st := statusOf(o.Result.Guarantees, profile.ProtectedPaths); st.Status != sandbox.Enforced {
			t.Errorf("protected-paths under the create guard in a workspace of 20,000 entries: %+v", st)
		}
		if hostGitRuns(marker, []string{repo}) {
			t.Errorf("ATTACK SUCCEEDED: host git in a repository beyond the old search ran the program the run planted\n%s\ndenials %+v", o, o.Result.Denials)
		}
		if _, err := req.Executor.Prepare(t.Context(), sandbox.Cmd{Args: sandboxtest.Sh("true")}); err != nil {
			t.Errorf("a profile requiring protected paths was not prepared under the create guard: %v", err)
		}
	}

	// Without the guard the search for repositories is bounded, and the
	// Report says so.
	t.Run("without-create-guard", func(t *testing.T) {
		t.Cleanup(sandbox.SetCreateGuardForTest(false))
		o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Sh("true")})
		said := false
		for _, d := range o.Result.Denials {
			said = said || strings.Contains(d.Reason, "end-of-run search for new repositories stopped")
		}
		if !said {
			t.Errorf("no denial says the end-of-run search was cut short: %+v", o.Result.Denials)
		}
		st := statusOf(o.Result.Guarantees, profile.ProtectedPaths)
		if st.Status != sandbox.Degraded || !strings.Contains(st.Reason, "stopped after 20000 entries") {
			t.Errorf("the run's Report does not say the search was cut short: %+v", st)
		}
		if o.Result.Level == sandbox.LevelFull {
			t.Errorf("the run's level is full with protected paths degraded")
		}
		_, err := req.Executor.Prepare(t.Context(), sandbox.Cmd{Args: sandboxtest.Sh("true")})
		var ue *sandbox.UnavailableError
		if !errors.As(err, &ue) {
			t.Errorf("a profile requiring protected paths was prepared without the guard: %v", err)
		}
	})

	sb.Host(t, p)
	if !hostGitRuns(marker, []string{repo}) {
		t.Fatal("positive control failed: the script on the host did not make host git run the marker")
	}
}

func statusOf(gs []sandbox.GuaranteeStatus, g profile.Guarantee) sandbox.GuaranteeStatus {
	for _, s := range gs {
		if s.Guarantee == g {
			return s
		}
	}
	return sandbox.GuaranteeStatus{}
}

// repoBeyondSearchBound makes, in the git workspace ws, a nested
// repository (b/c/repo, one commit) that a breadth-first search of the
// workspace meets only after 20,001 other entries (the start's search
// bound without the create guard), and returns its path.
func repoBeyondSearchBound(t *testing.T, ws string) string {
	t.Helper()
	many := filepath.Join(ws, "a")
	must(t, os.Mkdir(many, 0o755))
	for i := 0; i <= 20000; i++ {
		f, err := os.Create(filepath.Join(many, fmt.Sprint(i)))
		must(t, err)
		f.Close()
	}
	repo := filepath.Join(ws, "b", "c", "repo")
	must(t, os.MkdirAll(repo, 0o755))
	gitSetup(t, repo, "init", "-q", ".")
	gitSetup(t, repo, "commit", "-q", "--allow-empty", "-m", "one")
	gitSetup(t, ws, "config", "status.showUntrackedFiles", "no")
	return repo
}
