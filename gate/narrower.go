package gate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/tool"
)

// maxNarrower bounds how many entries a reason names.
const maxNarrower = 8

// narrower returns, for a search tool the agent runs itself (Claude
// Code's own Grep and Glob, which no sandbox masks) denied a read of
// the tree at dir, the narrower calls that would be allowed: the entries
// of dir that neither a deny rule nor the profile denies any part of.
// The agent can then search those, and the denied files' content never
// reaches it. "" for other tools, outside the workspace ws, or when no
// entry is clear.
func (e *Evaluator) narrower(toolName, ws, dir string, now time.Time) string {
	if toolName != "Grep" && toolName != "Glob" || ws == "" || !profile.Within(filepath.Clean(ws), dir) {
		return ""
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	tp, _ := e.Profile.(interface{ DeniedBeneath(string) string })
	var clear []string
	more := false
	for _, ent := range entries {
		p := filepath.Join(dir, ent.Name())
		r := tool.Requirement{Kind: tool.KindFilesystemRead, Target: p, Tree: ent.IsDir(), Tool: toolName}
		if e.match(rules.Deny, r, now) != nil || e.access(r, false) == profile.AccessDeny {
			continue
		}
		if tp != nil && ent.IsDir() && tp.DeniedBeneath(p) != "" {
			continue
		}
		if len(clear) == maxNarrower {
			more = true
			break
		}
		name := ent.Name()
		if ent.IsDir() {
			name += "/"
		}
		clear = append(clear, name)
	}
	if len(clear) == 0 {
		return ""
	}
	list := strings.Join(clear, ", ")
	if more {
		list += ", ..."
	}
	return fmt.Sprintf("; a %s of any of these entries of %s is allowed: %s", toolName, dir, list)
}
