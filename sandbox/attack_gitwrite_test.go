package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// writeInPlace opens the files it is given for writing without O_CREAT
// (Python's "r+", O_WRONLY|O_TRUNC) and truncates them (truncate(2)),
// then appends a line naming the program in argv[1] to each: what a run
// that finds a repository's config or hooks would do to make host git
// run its program without making any name. It prints one line per call
// with the error it met.
const writeInPlace = `
import os, sys
fsm = sys.argv[1]
cfg, hook = sys.argv[2], sys.argv[3]
def attempt(what, fn):
    try:
        fn()
        print(what, "ok")
    except OSError as e:
        print(what, "error", e.errno)
def rplus():
    with open(cfg, "r+") as f:
        f.seek(0, 2)
        f.write("[core]\n\tfsmonitor = %s\n" % fsm)
def wronly():
    fd = os.open(hook, os.O_WRONLY | os.O_TRUNC)
    os.write(fd, ("#!/bin/sh\n%s\n" % fsm).encode())
    os.close(fd)
attempt("config r+", rplus)
attempt("config truncate", lambda: os.truncate(cfg, 0))
attempt("hook O_WRONLY|O_TRUNC", wronly)
attempt("hook truncate", lambda: os.truncate(hook, 0))
# Ordinary files: the same calls must work.
def ordinary():
    with open("ordinary.txt", "r+") as f:
        f.write("CHANGED")
    os.truncate("cut.txt", 3)
attempt("ordinary", ordinary)
`

// TestAttackGitWriteInPlace: a nested repository that the start's search
// never reaches (beyond 20,000 entries, and beyond any other bound) has
// its existing config and hooks opened for writing without O_CREAT and
// truncated. The create guard refuses each call when it comes: the
// config and the hook are unchanged on the host, and host git there runs
// no program of the run's. Ordinary files take the same calls, and git
// still commits in that repository inside the run. The control runs the
// same program on the host: the config changes and host git runs the
// marker.
func TestAttackGitWriteInPlace(t *testing.T) {
	sandboxtest.PlantSecrets(t)
	ws := sandboxtest.GitWorkspace(t)
	repo := repoBeyondSearchBound(t, ws)
	cfg := filepath.Join(repo, ".git", "config")
	hook := filepath.Join(repo, ".git", "hooks", "post-commit")
	must(t, os.WriteFile(hook, []byte("#!/bin/sh\nexit 0\n"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "ordinary.txt"), []byte("original"), 0o644))
	must(t, os.WriteFile(filepath.Join(ws, "cut.txt"), []byte("0123456789"), 0o644))
	// Everything below must be readable and writable by the unprivileged
	// rerun, which owns the workspace.

	sb := sandboxtest.New(t, preset, ws, nil)
	if !sb.Executor.Report().Host.CreateGuard {
		t.Skip("no create guard on this host: " + sb.Executor.Report().Host.CreateGuardReason)
	}
	marker := filepath.Join(sandboxtest.OutsideDir(t), "ran")
	evil := filepath.Join(ws, "evil.sh")
	must(t, os.WriteFile(evil, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755))
	beforeCfg, beforeHook := sandboxtest.FileState(cfg), sandboxtest.FileState(hook)
	p := sandboxtest.Probe{Args: sandboxtest.Py(writeInPlace, evil, cfg, hook)}

	o := sb.Run(t, p)
	for _, want := range []string{"config r+ error 1", "config truncate error 1", "hook O_WRONLY|O_TRUNC error 1", "hook truncate error 1", "ordinary ok"} {
		if !strings.Contains(o.Stdout, want) {
			t.Errorf("the run did not print %q:\n%s", want, o)
		}
	}
	if got := sandboxtest.FileState(cfg); got != beforeCfg {
		t.Errorf("ATTACK SUCCEEDED: the nested repository's config changed on the host\n%s", o)
	}
	if got := sandboxtest.FileState(hook); got != beforeHook {
		t.Errorf("ATTACK SUCCEEDED: the nested repository's hook changed on the host\n%s", o)
	}
	if hostGitRuns(marker, []string{repo}) {
		t.Errorf("ATTACK SUCCEEDED: host git in the nested repository ran the program the run planted\n%s", o)
	}
	for _, target := range []string{cfg, hook} {
		said := false
		for _, d := range o.Result.Denials {
			said = said || d.Kind == "filesystem" && d.Target == target && strings.Contains(d.Reason, "not written")
		}
		if !said {
			t.Errorf("no denial names the refused writes to %s: %+v", target, o.Result.Denials)
		}
	}
	// Ordinary files took the same calls.
	if b, _ := os.ReadFile(filepath.Join(ws, "ordinary.txt")); string(b) != "CHANGEDl" {
		t.Errorf("positive control failed: an ordinary file opened r+ reads %q on the host", b)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "cut.txt")); string(b) != "012" {
		t.Errorf("positive control failed: an ordinary file truncated to 3 reads %q on the host", b)
	}

	// Git itself still works in that repository inside the run.
	commits := strings.Count(gitRun(repo, "log", "--oneline"), "\n")
	o = sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Sh(`cd b/c/repo && echo x > f && git add f && git -c user.name=r -c user.email=r@test.invalid commit -q -m two && git log --oneline | wc -l`)})
	if o.ExitCode != 0 || strings.Count(gitRun(repo, "log", "--oneline"), "\n") != commits+1 {
		t.Errorf("positive control failed: git commit in the nested repository inside the run\n%s", o)
	}

	// The same program on the host changes the config and host git runs
	// the marker.
	sb.Host(t, p)
	if sandboxtest.FileState(cfg) == beforeCfg {
		t.Fatal("positive control failed: the program on the host did not change the config")
	}
	must(t, os.WriteFile(cfg, []byte("[core]\n\tfsmonitor = "+evil+"\n"), 0o644))
	if !hostGitRuns(marker, []string{repo}) {
		t.Fatal("positive control failed: a config naming the program did not make host git run it")
	}
}
