package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/airlockhq/airlock/internal/visible"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// Refusals a command meets with no airlock event behind them: what the
// sandbox does by design (a private /tmp, a protected .git), said in one
// line that names the cause and the fix.

// privateTmpHints are the Report's records, one line each, for the
// arguments of a failed run that name a file of the host's /tmp, which
// the sandbox's private /tmp does not hold ("sh /tmp/x.sh": not found).
func privateTmpHints(argv []string, p *profile.Profile) []sandbox.Denial {
	var out []sandbox.Denial
	for _, a := range argv {
		if !strings.HasPrefix(a, "/tmp/") || p.CanRead(a) {
			continue
		}
		if _, err := os.Stat(a); err != nil {
			continue
		}
		out = append(out, sandbox.Denial{Kind: "filesystem", Target: a,
			Reason: "the sandbox's /tmp is private: this file is on the host's /tmp only; put it in the workspace, or pass --allow-read " + a})
	}
	return out
}

// gitWorktreeRefusal refuses "git worktree add PATH" with PATH outside
// what the sandbox writes to the host: the worktree would be made in the
// sandbox's own view (its private /tmp, or a read-only path) and vanish
// with the run, and the entry git adds to .git/worktrees would point at
// nothing on the host.
func gitWorktreeRefusal(argv []string, dir string, p *profile.Profile) error {
	if len(argv) == 0 || filepath.Base(argv[0]) != "git" {
		return nil
	}
	args := argv[1:]
	// git's own options before the subcommand: -C DIR changes where
	// the path is relative to.
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if (args[0] == "-C" || args[0] == "-c") && len(args) > 1 {
			if args[0] == "-C" {
				dir = resolveFrom(dir, args[1])
			}
			args = args[1:]
		}
		args = args[1:]
	}
	if len(args) < 2 || args[0] != "worktree" || args[1] != "add" {
		return nil
	}
	var path string
	for i := 2; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-b" || a == "-B" || a == "--reason":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			path = a
		}
		if path != "" {
			break
		}
	}
	if path == "" {
		return nil
	}
	abs := resolveFrom(dir, path)
	if p.CanWrite(abs) {
		return nil // the workspace or an --allow-write path: the host's
	}
	return fmt.Errorf("git worktree add %s: %s is outside the workspace, so the worktree would be made in the sandbox's private view and vanish with the run, leaving a stale entry in .git/worktrees; run git worktree add on the host, or give a path inside the workspace", visible.Text(path), visible.Text(abs))
}

func resolveFrom(dir, path string) string {
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	return filepath.Clean(path)
}

// setupHint is the line after a setup error whose words are the kernel's:
// a fork refused under the process budget before the command ran.
func setupHint(err error, pids int) string {
	var se *sandbox.SetupError
	if pids > 0 && errors.As(err, &se) && strings.HasPrefix(se.Step, "exec") && strings.Contains(err.Error(), "resource temporarily unavailable") {
		return fmt.Sprintf("airlock: the process budget (--pids %d) left no room to start the command: the sandbox's init and its helper count against it too; raise --pids", pids)
	}
	return ""
}
