package landlock

import (
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// Rule is one rule of a ruleset as a planner decides it before Restrict
// runs, possibly in another process: the stage-2 helper applies the rules
// the supervisor planned (Ruleset.Rules), in their order.
type Rule struct {
	// Path is absolute and clean.
	Path string `json:"path"`
	// Access is the LANDLOCK_ACCESS_FS_* rights on Path and beneath it,
	// as asked for; Restrict cuts them to what the kernel handles and to
	// what the file type can carry.
	Access uint64 `json:"access"`
	// Type is what the planner found at Path without following a
	// symlink there. TypeUnknown: Restrict opens Path following a
	// symlink, as the kernel would at access time, and looks at what it
	// opened. TypeDir or TypeFile: Restrict opens Path's last component
	// relative to its directory without following a symlink (one that
	// appeared since the plan is skipped, never followed) and takes the
	// type from here instead of a stat.
	Type FileType `json:"type,omitempty"`
}

// FileType is what a planner found at a rule's path.
type FileType string

// The file types of a Rule.
const (
	TypeUnknown FileType = ""
	TypeDir     FileType = "dir"
	TypeFile    FileType = "file"
)

// Compile returns the rules Restrict applies for rs, in the order it
// applies them: rs.Rules first, then one rule per path of the lists (in
// the order the paths first appear, each path's rights from every list
// that names it, its type from rs.Types), without the rules that grant
// nothing their directories' rules do not already grant (Prune).
func (rs Ruleset) Compile() []Rule {
	rules := append([]Rule(nil), rs.Rules...)
	index := map[string]int{}
	for i, r := range rules {
		index[r.Path] = i
	}
	add := func(paths []string, access uint64) {
		for _, p := range paths {
			if path.IsAbs(p) {
				p = path.Clean(p)
			}
			if i, ok := index[p]; ok {
				rules[i].Access |= access
				continue
			}
			index[p] = len(rules)
			rules = append(rules, Rule{Path: p, Access: access, Type: rs.Types[p]})
		}
	}
	add(rs.Read, accessRead)
	add(rs.List, unix.LANDLOCK_ACCESS_FS_READ_DIR)
	add(rs.Write, accessWrite)
	add(rs.Exec, accessExec)
	add(rs.IoctlDev, accessIoctlDev)
	return Prune(rules)
}

// Prune drops the typed rules (Type not TypeUnknown: the planner saw no
// symlink at their path, and Restrict follows none there) that grant
// nothing more than the rules on their directories: Landlock allows an
// access when any rule on the file or a directory above it, in the walk
// up from the file, grants it, so such a rule changes nothing.
// Directories are taken from the paths as written (a rule on /a covers
// /a/b). A rule of unknown type may be a symlink leading elsewhere
// (/proc/self/exe) and is always kept; and as removing a rule never
// grants anything, Prune can only ever take access away. A rule on a
// file is no one's directory. The order of the rules kept is unchanged.
func Prune(rules []Rule) []Rule {
	dirs := map[string]uint64{}
	for _, r := range rules {
		if r.Type != TypeFile && path.IsAbs(r.Path) {
			dirs[r.Path] |= r.Access
		}
	}
	out := rules[:0:0]
	for _, r := range rules {
		if r.Type == TypeUnknown || !path.IsAbs(r.Path) || r.Access&^above(dirs, r.Path) != 0 {
			out = append(out, r)
		}
	}
	return out
}

// above is the union of the rights dirs grants on the directories above
// p, a clean absolute path.
func above(dirs map[string]uint64, p string) uint64 {
	var a uint64
	for p != "/" {
		i := strings.LastIndexByte(p, '/')
		if p = p[:i]; p == "" {
			p = "/"
		}
		a |= dirs[p]
	}
	return a
}
