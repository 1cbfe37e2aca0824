package sandbox

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
	out := make([]protectedState, 0, len(rels))
	for _, rel := range rels {
		st := protectedState{path: filepath.Join(ws, rel)}
		if fi, err := os.Lstat(st.path); err == nil {
			st.existed = true
			if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
				st.dev, st.ino = uint64(sys.Dev), sys.Ino
			}
		}
		out = append(out, st)
	}
	return out
}

// checkProtected compares the protected paths with their state at start
// and moves aside what the run created or swapped in.
func checkProtected(ws string, before []protectedState, runID string) []Denial {
	var denials []Denial
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

// freshGitSafe accepts the .git/hooks and .git/config of a repository the
// run created itself (git init): hooks holding only the inert *.sample
// files, and a config holding only keys that never run a program.
func freshGitSafe(ws, path string) bool {
	switch path {
	case filepath.Join(ws, ".git/hooks"):
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
	case filepath.Join(ws, ".git/config"):
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
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return false
			}
			// [remote "origin"] → remote; the subsection name is irrelevant.
			name := strings.Fields(line[1:end])
			if len(name) == 0 {
				return false
			}
			section = strings.ToLower(name[0])
			if rest := strings.TrimSpace(line[end+1:]); rest != "" {
				line = rest
			} else {
				continue
			}
		}
		key, _, _ := strings.Cut(line, "=")
		if !inertGitKeys[section+"."+strings.ToLower(strings.TrimSpace(key))] {
			return false
		}
	}
	return sc.Err() == nil
}
