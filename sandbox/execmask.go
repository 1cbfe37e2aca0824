package sandbox

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/profile"
)

// Programs masked by deny entries (a workspace's Bash(rm:*) deny rule,
// compiled by package workspace into a deny entry for /usr/bin/rm): the
// mask is an empty file without an execute bit, so the kernel refuses
// the exec with EACCES before any open event the mask watch could
// answer, and no program explains it. When a deny entry lies in a
// program directory, the exec watch also stops every exec and, when the
// file it names is masked by a deny entry, says so on the run's stderr
// and records an "exec" Denial. It observes, as for the exec boundary:
// the mask refuses, whatever the line says.

// programDirs are the directories of the sandbox's default PATH.
func programDirs() []string { return filepath.SplitList(defaultPath) }

// masksPrograms reports whether a deny entry of s lies in a program
// directory (or its symlink-resolved form does).
func masksPrograms(s profile.Spec) bool {
	dirs := programDirs()
	for _, d := range programDirs() {
		if real, err := filepath.EvalSymlinks(d); err == nil && !slices.Contains(dirs, real) {
			dirs = append(dirs, real)
		}
	}
	for _, g := range s.Filesystem.Deny {
		if slices.Contains(dirs, filepath.Dir(g)) {
			return true
		}
	}
	return false
}

// maskedExec returns why the exec of the file open at fd (O_PATH, in
// the sandbox's root) is refused by a deny entry's mask, or "".
func (w *execWatch) maskedExec(fd int) (view, reason string) {
	if len(w.deny) == 0 {
		return "", ""
	}
	var buf [unix.PathMax]byte
	k, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf[:])
	if err != nil || k >= len(buf) {
		return "", ""
	}
	view = strings.TrimSuffix(string(buf[:k]), " (deleted)")
	if g := hidingGlob(w.deny, view); g != "" {
		return view, "exec refused: the program is masked by deny " + g
	}
	return "", ""
}
