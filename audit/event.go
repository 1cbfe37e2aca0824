package audit

import (
	"os"
	"path/filepath"
	"time"
)

// Event is one line of the audit log.
type Event struct {
	Time        time.Time      `json:"time"`                   // set by Append when zero
	Type        string         `json:"type"`                   // TypeDecision, TypeSpawn, TypeEnforcement or TypeExit
	ExecutionID string         `json:"execution_id,omitempty"` // joins the events of one execution
	SessionID   string         `json:"session_id,omitempty"`   // the agent's session (Claude Code's session_id)
	ToolUseID   string         `json:"tool_use_id,omitempty"`  // the agent's id for this tool call (Claude Code's tool_use_id)
	Tool        string         `json:"tool,omitempty"`         // the agent's tool, e.g. "Bash"
	Decision    string         `json:"decision,omitempty"`     // allow|ask|deny
	Reason      string         `json:"reason,omitempty"`       // why, in words a person reads
	Rule        string         `json:"rule,omitempty"`         // the rule that matched, if any
	Layer       string         `json:"layer,omitempty"`        // where the rule or the refusal came from
	Requirement *Requirement   `json:"requirement,omitempty"`  // the requirement decided or enforced
	Profile     string         `json:"profile,omitempty"`      // profile fingerprint
	Detail      map[string]any `json:"detail,omitempty"`       // anything else; numbers read back as json.Number
}

// Requirement is the typed need the event is about.
type Requirement struct {
	Kind   string `json:"kind"`   // e.g. "command.execute", "net.connect"
	Target string `json:"target"` // e.g. "git push origin main", "example.com:443"
}

// The event types.
const (
	TypeDecision    = "decision"    // the gate decided a tool call
	TypeSpawn       = "spawn"       // a process started in the sandbox
	TypeEnforcement = "enforcement" // the kernel or the egress layer refused something
	TypeExit        = "exit"        // the execution ended
)

// DefaultPath is where the log lives unless told otherwise:
//
//  1. $AIRLOCK_AUDIT_LOG, if set and not empty;
//  2. $XDG_STATE_HOME/airlock/audit.jsonl, if XDG_STATE_HOME is an absolute
//     path (the XDG Base Directory spec says to ignore a relative one);
//  3. ~/.local/state/airlock/audit.jsonl.
//
// It returns "" when none applies because the home directory is unknown;
// Open("") fails with a message that says to set AIRLOCK_AUDIT_LOG.
func DefaultPath() string {
	if p := os.Getenv("AIRLOCK_AUDIT_LOG"); p != "" {
		return p
	}
	if s := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(s) {
		return filepath.Join(s, "airlock", "audit.jsonl")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".local", "state", "airlock", "audit.jsonl")
}
