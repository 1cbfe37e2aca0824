package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/airlockhq/airlock/audit"
	"github.com/airlockhq/airlock/grant"
	"github.com/airlockhq/airlock/integrations/claudecode"
	"github.com/airlockhq/airlock/internal/cli"
)

const hookUsage = `Usage: airlock hook claude-code [FLAGS]

Claude Code's PreToolUse hook. Reads one tool call as JSON on stdin and
prints the gate's decision for it, decided with the rules of the call's
workspace (managed, user, workspace and local airlock layers plus
.claude/settings.json and .claude/settings.local.json) and the workspace's
profile:

  {"hookSpecificOutput": {"hookEventName": "PreToolUse",
    "permissionDecision": "allow" | "deny" | "ask",
    "permissionDecisionReason": "airlock: ..."}}

and exits 0. What the gate leaves to a person comes back as "ask": Claude
Code asks its user; the hook never waits. The answer never makes Claude
Code less strict than it is alone: under the call's permission_mode, where
Claude Code alone would ask (a write no rule allows in "default", anything
that changes something in "plan") the hook prints no permissionDecision
and Claude Code's own permissions decide; deny holds in every mode, also
bypassPermissions. Tools that steer Claude Code (Agent, AskUserQuestion,
plan mode, todos, skills, tasks) are left to Claude Code unless a rule
names them; a tool airlock does not know yet is asked about. Input that is
empty, larger than 4 MiB, not one JSON object, has duplicate keys, is not
a PreToolUse call or has a field airlock reads of the wrong type is
blocked: exit 2 and the reason on stderr. Every answer goes to the audit
log with Claude Code's session_id and tool_use_id ("defer" where it gave
no decision).

The workspace is $CLAUDE_PROJECT_DIR when the call's cwd is inside it,
else the nearest directory above cwd with .airlock/, .claude/ or .git,
else cwd.

With --sandbox (or "sandbox = true" in an airlock policy file), a Bash
call that is not denied comes back with updatedInput: its command runs
the original under 'airlock run --workspace WS' with a single-use grant
for exactly that command, directory and profile, so the run refuses an
edited or replayed command. The grant key and ledger live in
$AIRLOCK_GRANT_DIR (default ~/.local/state/airlock/grants), which the
hook and the command must share.

Register it with 'airlock init claude-code', or paste into
.claude/settings.json:

  {
    "hooks": {
      "PreToolUse": [
        {
          "matcher": "*",
          "hooks": [
            {"type": "command", "command": "/path/to/airlock",
             "args": ["hook", "claude-code"], "onFailure": "block"}
          ]
        }
      ]
    }
  }

Flags:
`

// exitBlock is Claude Code's "block this call". The hook's usage errors
// exit with it, not the CLI's 125: Claude Code takes any other failure
// for a non-blocking error and lets the call through.
const exitBlock = 2

// runHook is "airlock hook AGENT". Its exit status is what Claude Code
// reads: 0 with a decision on stdout, 2 to block the call.
func runHook(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("airlock hook claude-code", hookUsage, stdout, stderr)
	sandboxFlag := fs.Bool("sandbox", false, "run every Bash call that is not denied inside airlock run")
	workspace := fs.String("workspace", "", "the workspace `DIR` of every call (default: found from the call's cwd)")
	auditPath := fs.String("audit", "", "the audit log `PATH` (default "+audit.DefaultPath()+")")
	if len(args) == 0 {
		fmt.Fprintln(stderr, "airlock hook: name the agent: airlock hook claude-code")
		return exitBlock
	}
	agent := args[0]
	if agent == "-h" || agent == "--help" || agent == "help" {
		fs.SetOutput(stdout)
		fs.Usage()
		cli.PrintFlags(stdout, fs)
		return 0
	}
	if agent != "claude-code" {
		fmt.Fprintf(stderr, "airlock hook: unknown agent %q; the hook knows claude-code\n", agent)
		return exitBlock
	}
	if code := cli.ParseFlags(fs, args[1:], exitBlock, stdout, stderr); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "airlock hook claude-code: takes no arguments; the call comes on stdin")
		return exitBlock
	}

	h := &claudecode.Hook{Policy: cli.WorkspacePolicy}
	projectDir := os.Getenv("CLAUDE_PROJECT_DIR")
	if filepath.IsAbs(projectDir) {
		projectDir = filepath.Clean(projectDir)
	} else {
		projectDir = ""
	}
	h.Workspace = func(cwd string) string { return claudecode.FindWorkspace(cwd, projectDir) }
	if *workspace != "" {
		ws, err := filepath.Abs(*workspace)
		if err != nil {
			fmt.Fprintln(stderr, "airlock: blocked:", err)
			return claudecode.ExitBlocked
		}
		h.Workspace = func(string) string { return ws }
	}
	path := *auditPath
	if path == "" {
		path = audit.DefaultPath()
	}
	log, err := audit.Open(path)
	if err != nil {
		// Every decision must reach the log; without one, nothing is
		// allowed.
		fmt.Fprintf(stderr, "airlock: blocked: the audit log cannot be opened, so no call is decided: %v\n", err)
		return claudecode.ExitBlocked
	}
	defer log.Close()
	h.Recorder = log

	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "airlock: blocked: finding airlock's own path:", err)
		return claudecode.ExitBlocked
	}
	dir := grant.DefaultDir()
	sb := &claudecode.Sandbox{Always: *sandboxFlag, Airlock: self, GrantDir: dir, AuditLog: log.Path(),
		OpenIssuer: func() (*grant.Issuer, error) { return grant.OpenDir(dir) }}
	h.Sandbox = sb
	return h.Run(context.Background(), os.Stdin, stdout, stderr)
}
