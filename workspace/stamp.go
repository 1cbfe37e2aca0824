package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/rules"
)

// Stamp identifies the state of the files Load(ws, o) reads for
// workspace ws: the workspace's profile file and every rule file of
// every layer. A cache of a Policy holds while its stamp does; a rule
// file is replaced by rename, so its inode changes with every write.
func Stamp(ws string, o Overrides) string {
	var b strings.Builder
	paths := []string{filepath.Join(ws, profile.WorkspaceFile)}
	if o.Profile != "" {
		paths = append(paths, o.Profile)
	}
	for _, f := range o.sources(ws).Files() {
		paths = append(paths, f.Path)
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			b.WriteString("-|")
			continue
		}
		var ino uint64
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			ino = st.Ino
		}
		fmt.Fprintf(&b, "%d.%d.%d|", fi.ModTime().UnixNano(), fi.Size(), ino)
	}
	return b.String()
}

// RuleSources lists where the rule files of workspace ws are, strongest
// layer first, existing or not, for a caller that names them (policy
// list).
func RuleSources(ws string, o Overrides) []rules.File {
	return o.sources(ws).Files()
}
