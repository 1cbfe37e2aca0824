package workspace

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/airlockhq/airlock/rules"
)

// A Bash deny rule that names a whole program (Bash(rm:*), Bash(curl *))
// is compiled into masks of that program: every name it has in the
// directories a command finds programs in (the sandbox's default PATH),
// and every other name of the same file there (hard links, and the file
// symlinks lead to), become deny entries. The caller's own PATH is not
// looked at: the overlay is part of the profile's fingerprint, which the
// hook that issues a grant and the airlock run that redeems it must
// compute alike whatever their environments. The view
// then holds an empty unreadable file there, so the program can be run
// by no route (an interpreter's subprocess, find -exec, xargs, a script,
// a shell function all end in an execve of that path) and cannot be
// copied elsewhere to be run under another name. Nothing is decided on
// the execve's path argument, which the command could change between a
// check and the kernel's own read of it.
//
// What this cannot reach, and the report says: a rule with arguments
// (Bash(git push:*)): the program is needed for everything else; a
// program that is one of the names of a multi-call binary (busybox),
// whose mask would take every other name with it; and a different
// program doing the same (an interpreter's os.remove, a copy the command
// brings itself).

// programDirs are the sandbox's default PATH (sandbox/plan.go); a test
// adds its own.
var programDirs = []string{"/usr/local/bin", "/usr/bin", "/bin", "/usr/local/sbin", "/usr/sbin", "/sbin"}

// programIndex lists, once per KernelRules call, the names of every file
// in the program directories by device and inode.
type programIndex struct {
	dirs  []string // program directories, symlinks resolved, each once
	names map[[2]uint64][]string
}

func newProgramIndex(ws []string) *programIndex {
	x := &programIndex{names: map[[2]uint64][]string{}}
	seen := map[string]bool{}
	for _, d := range programDirs {
		if !filepath.IsAbs(d) {
			continue
		}
		real, err := filepath.EvalSymlinks(d)
		if err != nil || seen[real] || within(ws, real) {
			continue
		}
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
			continue
		}
		seen[real] = true
		x.dirs = append(x.dirs, real)
		ents, _ := os.ReadDir(real)
		for _, e := range ents {
			p := filepath.Join(real, e.Name())
			if id, ok := fileID(p); ok {
				x.names[id] = append(x.names[id], p)
			}
		}
	}
	return x
}

// within reports whether p is one of dirs or beneath one.
func within(dirs []string, p string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// fileID is the device and inode of the regular file p leads to.
func fileID(p string) ([2]uint64, bool) {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return [2]uint64{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return [2]uint64{}, false
	}
	return [2]uint64{uint64(st.Dev), st.Ino}, true
}

// masks returns the paths to mask for program name: every name of each
// file it is in the program directories, and the name itself in every
// directory it is absent from (so one installed there during the run is
// masked too). multi names a multi-call binary the name belongs to.
func (x *programIndex) masks(name string) (paths []string, multi string) {
	set := map[string]bool{}
	for _, d := range x.dirs {
		p := filepath.Join(d, name)
		id, ok := fileID(p)
		if !ok {
			if _, err := os.Lstat(p); err != nil {
				set[p] = true // absent: masked should it appear
			}
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		for _, n := range x.names[id] {
			if b := filepath.Base(n); !related(b, name) {
				return nil, real
			}
			// The file itself, by the name it has once symlinks are
			// followed: a mask on a symlink's path would not hold.
			if r, err := filepath.EvalSymlinks(n); err == nil {
				set[r] = true
			}
		}
		set[real] = true
	}
	for p := range set {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths, ""
}

// related reports whether two names of one file are names of the same
// program (python3 and python3.11, gcc-12 and x86_64-linux-gnu-gcc-12:
// one holds the other once versions are cut off),
// not of a multi-call binary's applets (rm and ls).
func related(a, b string) bool {
	a, b = stem(a), stem(b)
	return a != "" && b != "" && (strings.Contains(a, b) || strings.Contains(b, a))
}

// stem is a program name without a trailing version (python3.11 →
// python, airlocktool-1.2 → airlocktool).
func stem(name string) string { return strings.TrimRight(name, "0123456789.-_") }

// command compiles a Bash deny rule.
func (c *compiler) command(p *rules.Pattern, e *Enforcement) {
	if p.All() {
		gateOnly(e, "a deny of every command leaves the sandbox nothing to run; the gate refuses each")
		return
	}
	prog, whole, ok := p.Program()
	switch {
	case !ok:
		gateOnly(e, "the rule's program is a wildcard; the kernel sees files run, not names matched")
		return
	case !whole:
		gateOnly(e, "the rule names arguments or flags of "+prog+"; the kernel sees "+prog+" run, not what it is asked to do, and masking it would refuse every other use")
		return
	case strings.Contains(prog, "/") && !filepath.IsAbs(prog):
		gateOnly(e, "the rule names "+prog+" relative to a directory only known when a command runs")
		return
	}
	var paths []string
	var multi string
	if filepath.IsAbs(prog) {
		paths = []string{filepath.Clean(prog)}
		if real, err := filepath.EvalSymlinks(prog); err == nil && real != paths[0] {
			paths = append(paths, real)
		}
	} else {
		if c.programs == nil {
			c.programs = newProgramIndex(c.ws)
		}
		paths, multi = c.programs.masks(prog)
	}
	if multi != "" {
		gateOnly(e, prog+" is one name of the multi-call binary "+multi+", whose mask would take every other program it is")
		return
	}
	var kept []string
	for _, path := range paths {
		if !c.hidesWorkspace(path) {
			kept = append(kept, path)
		}
	}
	if len(kept) == 0 {
		gateOnly(e, "no program directory to mask "+prog+" in")
		return
	}
	c.out.Filesystem.Deny = append(c.out.Filesystem.Deny, kept...)
	e.Kernel = true
	e.Mechanism = "filesystem.deny " + strings.Join(kept, ", ") + ": " + prog + " masked in the mount view (an empty unreadable file: it runs by no route and cannot be copied)"
	e.Note = "another program doing the same (an interpreter's own code, a copy brought in, a multi-call binary) is only the gate's"
}
