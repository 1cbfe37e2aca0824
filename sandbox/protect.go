package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/airlockhq/airlock/profile"
)

// protectedState is what one protected path was when the run started.
//
// Existing protected paths are mounted read-only, which stops writes but
// not the replacement of a parent (mv .git .git.old; mkdir .git) nor the
// creation of a protected path that did not exist (.vscode/ in a project
// without one). Neither can be refused by name with Landlock or mounts
// without writing to the host, so the run is checked when it ends: a
// protected path that appeared or now names a different file is moved
// aside and reported, before anything on the host can act on it after
// the run.
type protectedState struct {
	path    string
	existed bool
	dev     uint64
	ino     uint64
}

func snapshotProtected(ws string, rels []string) []protectedState {
	var out []protectedState
	for _, rel := range rels {
		if hasGlob(rel) {
			continue // matches are taken below, and again after the run
		}
		out = append(out, stateOf(filepath.Join(ws, rel)))
	}
	for _, path := range protectedPaths(ws, globsOf(rels)) {
		out = append(out, stateOf(path))
	}
	return out
}

func stateOf(path string) protectedState {
	st := protectedState{path: path}
	if fi, err := os.Lstat(path); err == nil {
		st.existed = true
		if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
			st.dev, st.ino = uint64(sys.Dev), sys.Ino
		}
	}
	return st
}

// protectedPaths lists the existing paths the protected entries name; an
// entry may hold * and ? wildcards (filepath.Match, one name each).
func protectedPaths(ws string, rels []string) []string {
	var out []string
	for _, rel := range rels {
		path := filepath.Join(ws, rel)
		if !hasGlob(rel) {
			if _, err := os.Lstat(path); err == nil {
				out = append(out, path)
			}
			continue
		}
		matches, _ := filepath.Glob(path)
		out = append(out, matches...)
	}
	return out
}

func globsOf(rels []string) []string {
	var out []string
	for _, rel := range rels {
		if hasGlob(rel) {
			out = append(out, rel)
		}
	}
	return out
}

func hasGlob(s string) bool { return strings.ContainsAny(s, "*?[") }

// checkProtected compares the protected paths with their state at start
// and moves aside what the run created or swapped in.
func checkProtected(ws string, rels []string, before []protectedState, runID string) []Denial {
	var denials []Denial
	// Wildcard entries may match paths the run created.
	known := map[string]bool{}
	for _, st := range before {
		known[st.path] = true
	}
	for _, path := range protectedPaths(ws, globsOf(rels)) {
		if !known[path] {
			before = append(before, protectedState{path: path})
		}
	}
	for _, st := range before {
		fi, err := os.Lstat(st.path)
		if err != nil {
			continue // absent now: nothing to keep out
		}
		sys, _ := fi.Sys().(*syscall.Stat_t)
		switch {
		case st.existed && sys != nil && uint64(sys.Dev) == st.dev && sys.Ino == st.ino:
			continue // the same file; the read-only mount kept it unchanged
		case !st.existed && freshGitSafe(ws, st.path):
			continue // what `git init` writes into a repository the run created
		}
		what := "created during the run"
		if st.existed {
			what = "replaced during the run"
		}
		aside := st.path + ".airlock-quarantine-" + runID
		reason := fmt.Sprintf("protected path %s; moved to %s", what, filepath.Base(aside))
		if err := os.Rename(st.path, aside); err != nil {
			reason = fmt.Sprintf("protected path %s; could not move it aside: %v", what, err)
		}
		denials = append(denials, Denial{Kind: "filesystem", Target: st.path, Reason: reason})
	}
	return denials
}

// freshGitSafe accepts the hooks and config of a repository (or
// submodule) the run created itself: hooks holding only git's inert
// *.sample files, and a config holding only keys that never run a
// program. Anything else new under a protected name (commondir, which
// points git at another directory's hooks and config) is not accepted.
func freshGitSafe(ws, path string) bool {
	if !strings.HasPrefix(path, filepath.Join(ws, ".git")+"/") {
		return false
	}
	switch filepath.Base(path) {
	case "hooks":
		entries, err := os.ReadDir(path)
		if err != nil {
			return false
		}
		for _, e := range entries {
			if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".sample") {
				return false
			}
		}
		return true
	case "config":
		data, err := os.ReadFile(path)
		return err == nil && gitConfigInert(data)
	}
	return false
}

// inertGitKeys are the config keys `git init`, `git clone` and ordinary
// use write that cannot make git run a program. Anything else (core.
// fsmonitor, core.hooksPath, core.sshCommand, filters, aliases with "!",
// include.path, ...) is not on the list.
var inertGitKeys = map[string]bool{
	"core.repositoryformatversion": true, "core.filemode": true, "core.bare": true,
	"core.logallrefupdates": true, "core.ignorecase": true, "core.precomposeunicode": true,
	"core.symlinks": true, "core.autocrlf": true, "core.eol": true,
	"extensions.objectformat": true, "init.defaultbranch": true,
	"user.name": true, "user.email": true,
	"remote.url": true, "remote.fetch": true, "branch.remote": true, "branch.merge": true,
}

func gitConfigInert(data []byte) bool {
	inert := true
	ok := profile.EachGitConfigEntry(data, func(section, key, _ string) {
		inert = inert && inertGitKeys[section+"."+key]
	})
	return ok && inert
}

// withHooksPath adds to the protected entries the hooks directory the
// workspace's git config names (core.hooksPath, as husky and others
// set it), when it lies inside the workspace: git runs those hooks as it
// would .git/hooks, so they are agent-persistence paths too. Read at the
// start of a run (compile); .git/config itself is protected for the run.
func withHooksPath(ws string, rels []string) []string {
	rel := profile.GitHooksPath(ws)
	if rel == "" {
		return rels
	}
	return append(append([]string(nil), rels...), rel)
}
