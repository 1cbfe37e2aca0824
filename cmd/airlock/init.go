package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/airlockhq/airlock/integrations/claudecode"
	"github.com/airlockhq/airlock/internal/cli"
)

const initUsage = `Usage: airlock init claude-code [--user] [--sandbox] [--workspace DIR]

Registers airlock as Claude Code's PreToolUse hook for every tool, in the
workspace's .claude/settings.json (or with --user in ~/.claude/settings.json),
by adding:

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

with this airlock's absolute path (and "--sandbox" after the arguments
with --sandbox). The exec form ("args") runs airlock with no shell in
between; "onFailure": "block" makes a hook that cannot start, times out or
crashes block the call instead of letting it through. Both need a Claude
Code that knows them (the Agent SDK's published settings type has them);
an older one that ignores "args" runs airlock without arguments, which
then blocks every call and says why. Everything else in the file is kept,
in its order; an airlock hook already there (also in the shell form
earlier versions wrote) is updated in place, keeping members such as a
timeout, so a second run changes nothing. The previous file is saved as
settings.json.airlock-backup (.1, .2, ... when that exists) and the new
one is written atomically. A file that is not valid JSON is reported and
left as it is.

Flags:
`

// runInit is "airlock init AGENT".
func runInit(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("airlock init claude-code", initUsage, stdout, stderr)
	user := fs.Bool("user", false, "register in ~/.claude/settings.json (every project) instead of the workspace's")
	sandboxFlag := fs.Bool("sandbox", false, "make the hook run every Bash call that is not denied inside airlock run")
	workspace := fs.String("workspace", "", "the workspace `DIR` whose .claude/settings.json to change (default: the current directory)")
	if len(args) == 0 {
		fmt.Fprintln(stderr, "airlock init: name the agent: airlock init claude-code")
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help", "help":
		fs.SetOutput(stdout)
		fs.Usage()
		cli.PrintFlags(stdout, fs)
		return 0
	case "claude-code":
	default:
		fmt.Fprintf(stderr, "airlock init: unknown agent %q; init knows claude-code\n", args[0])
		return exitUsage
	}
	if code := cli.ParseFlags(fs, args[1:], exitUsage, stdout, stderr); code >= 0 {
		return code
	}
	if fs.NArg() > 0 || (*user && *workspace != "") {
		fmt.Fprintln(stderr, "airlock init claude-code: takes no arguments, and --user or --workspace, not both")
		return exitUsage
	}
	var path string
	mode := os.FileMode(0o644)
	if *user {
		home, err := os.UserHomeDir()
		if err != nil {
			fmt.Fprintln(stderr, "airlock init:", err)
			return 1
		}
		path, mode = filepath.Join(home, ".claude", "settings.json"), 0o600
	} else {
		ws := *workspace
		if ws == "" {
			wd, err := os.Getwd()
			if err != nil {
				fmt.Fprintln(stderr, "airlock init:", err)
				return 1
			}
			ws = wd
		}
		if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
			fmt.Fprintf(stderr, "airlock init: the workspace %s is not a directory\n", ws)
			return 1
		}
		path = filepath.Join(ws, ".claude", "settings.json")
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "airlock init: finding airlock's own path:", err)
		return 1
	}
	hook := claudecode.AirlockHook(self, *sandboxFlag)
	command := hook.String()
	res, err := claudecode.InstallHook(path, hook, mode)
	if err != nil {
		fmt.Fprintln(stderr, "airlock init:", err)
		return 1
	}
	if !res.Changed {
		fmt.Fprintf(stdout, "%s already runs %s for every tool, blocking the call when the hook fails; nothing changed\n", res.Path, command)
		return 0
	}
	fmt.Fprintf(stdout, "%s now runs %s before every tool call, blocking the call when the hook fails\n", res.Path, command)
	if res.Backup != "" {
		fmt.Fprintf(stdout, "the previous file is saved as %s\n", res.Backup)
	}
	fmt.Fprintln(stdout, "Claude Code reads hooks when a session starts: restart running sessions")
	return 0
}
