package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox/internal/linux/landlock"
)

// Deny entries beneath read-only paths (the presets' /etc/shadow,
// /etc/ssh/ssh_host_*_key and the like) are held to what exists at the
// start by Landlock itself, not by the deny watch: instead of one read
// rule for the whole root, the helper gets a rule for every entry the
// root held when the run was compiled, except what a deny entry hides,
// descending only into directories a deny entry can match beneath. A file
// that appears later at a denied path, or replaces one there (a new
// inode: the host's passwd(1) renames a new /etc/shadow into place, which
// also drops the mask's mount), is in no rule and cannot be opened. It
// costs a rule per entry when the run starts and nothing per open, where
// a fanotify watch on /etc would cost a round trip for every exec (the
// dynamic linker opens /etc/ld.so.cache).
//
// Symlinks get no rule of their own: Landlock decides on the file they
// lead to. Directories listed here keep READ_DIR through the view-wide
// List rule, so `ls /etc` still works.

// maxExpandedRules bounds one root's expansion; a root that would need
// more (a deny glob with ** under /usr, say) is left to the deny watch.
const maxExpandedRules = 4000

// readExpansion is the read rules that stand in for read-only roots.
type readExpansion map[string][]string

// expansionTypes is what the expansion's walk found at each path it
// lists (the directory entry's type, no stat): the helper then opens
// each without a lookup of its type and refuses a symlink there.
type expansionTypes map[string]landlock.FileType

// expandableRoots lists the read-only system paths of s (profile.
// SystemReadPaths) beneath which a deny entry can match and which a deny
// entry does not hide whole (its mask hides all of it). Other read paths
// are the user's, where a file that appears later is expected to be
// readable: the deny watch covers those.
func expandableRoots(s profile.Spec, globs []denyGlob) []string {
	if len(globs) == 0 {
		return nil
	}
	system := profile.SystemReadPaths()
	var out []string
	for _, r := range s.Filesystem.Read {
		if slices.Contains(system, r) && expandable(r, globs) {
			out = append(out, r)
		}
	}
	return out
}

// expandable reports whether a deny entry can match beneath the
// directory root and none hides root whole.
func expandable(root string, globs []denyGlob) bool {
	if !matchesBeneath(globs, root) || hiddenByAny(globs, root) {
		return false
	}
	fi, err := os.Lstat(root)
	return err == nil && fi.IsDir()
}

// expandReadRoots expands the expandable roots of s within the bound; a
// root over it is left to the deny watch. types, when not nil, gets the
// type of each path listed.
func expandReadRoots(s profile.Spec, globs []denyGlob, types expansionTypes) readExpansion {
	out := readExpansion{}
	for _, r := range expandableRoots(s, globs) {
		if paths, ok := expandReadRoot(r, globs, types); ok {
			out[r] = paths
		}
	}
	return out
}

// expandReadRoot returns the paths whose read rules replace those of
// root, an expandable directory, or false when there would be more than
// maxExpandedRules. types, when not nil, gets the type of each path
// listed; a root over the bound leaves some there, which no rule names.
func expandReadRoot(root string, globs []denyGlob, types expansionTypes) ([]string, bool) {
	var out []string
	var walk func(dir string) bool
	walk = func(dir string) bool {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return false
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			switch {
			case hiddenByAny(globs, p), e.Type()&fs.ModeSymlink != 0:
				continue
			case e.IsDir() && matchesBeneath(globs, p):
				if !walk(p) {
					return false
				}
				continue
			}
			if out = append(out, p); len(out) > maxExpandedRules {
				return false
			}
			if types != nil {
				types[p] = landlock.TypeFile
				if e.IsDir() {
					types[p] = landlock.TypeDir
				}
			}
		}
		return true
	}
	if !walk(root) {
		return nil, false
	}
	return out, true
}

func matchesBeneath(globs []denyGlob, dir string) bool {
	var parts []string
	for _, g := range globs {
		// A glob's fixed leading part must lie on dir's path, one way or
		// the other; most do not, and need no matching.
		if !profile.Within(g.root, dir) && !profile.Within(dir, g.root) {
			continue
		}
		if parts == nil {
			parts = splitGlobPath(dir)
		}
		if g.canMatchBeneath(dir, parts) {
			return true
		}
	}
	return false
}

func hiddenByAny(globs []denyGlob, path string) bool { return hidingGlob(globs, path) != "" }

// hidingGlob returns the first of globs that hides path, or "".
func hidingGlob(globs []denyGlob, path string) string {
	for _, g := range globs {
		if g.hides(path) {
			return g.pattern
		}
	}
	return ""
}

// landlockRead replaces the expanded roots in a list of read rules.
func (x readExpansion) landlockRead(paths []string) []string {
	if len(x) == 0 {
		return paths
	}
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if sub, ok := x[p]; ok {
			out = append(out, sub...)
			continue
		}
		out = append(out, p)
	}
	return out
}
