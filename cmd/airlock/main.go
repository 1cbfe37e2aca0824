// Command airlock gates and sandboxes the tool calls of AI agents.
//
// The command is thin: each subcommand parses its flags and calls the
// packages that do the work (profile, sandbox, gate, audit, ...).
//
// This binary holds the commands an agent's every tool call starts (run,
// hook) and the ones around them (doctor, policy, init, audit), and
// links nothing else: each start pays the Go runtime and every package
// init of the binary, page faults included, before main. mcp, exec and
// serve live in airlock-server (cmd/airlock-server), with the Docker
// client, SQLite, PostgreSQL and the MCP SDK; airlock hands them over
// with exec, so both are one command line. internal/binaries says which
// binary holds what, and its TestLeanImports keeps the heavy modules out
// of this one.
package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/internal/cli"
	// Grows the main goroutine's stack once, before the other inits:
	// every airlock process (hook, supervisor, helpers) starts faster.
	_ "github.com/airlockhq/airlock/internal/mainstack"
	"github.com/airlockhq/airlock/internal/proctime"
)

// subcommand is one entry of the CLI: its one-line summary and its entry
// point, which returns the process exit status.
type subcommand struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

// subcommands are every command of every binary (internal/binaries
// says which holds which: TestSubcommandsAsListed): this binary's own,
// and the ones it hands to airlock-server.
func subcommands() map[string]subcommand {
	return map[string]subcommand{
		"run":    {"run a command inside the sandbox", runRun},
		"doctor": {"show what this host can enforce and the Report of a profile", runDoctor},
		"policy": {"explain, test and list the gate's rules", runPolicy},
		"audit":  {"print or follow the audit log", runAudit},
		"hook":   {"answer an agent's tool-call hook (claude-code)", runHook},
		"init":   {"register the hook with an agent (claude-code)", runInit},
		"mcp":    {"serve MCP tools through the gate and sandbox, or gate another MCP server", handOff("mcp")},
		"exec":   {"run code in a named sandbox and print its Result as JSON", handOff("exec")},
		"serve":  {"run the approval daemon: an HTTP API and a web page for approvals", handOff("serve")},
	}
}

// processInit is how long the process took to reach main: its exec, the
// Go runtime's start and every package init (the Report's
// timings.process_init_ns).
var processInit time.Duration

func main() {
	processInit = proctime.Since()
	// What airlock's caller left open without close-on-exec (a shell's
	// "exec 7>>file", a make jobserver) is no business of the sandboxed
	// command: marked here, not even the stage-2 helper receives it. The
	// helper marks them again itself, for programs that use package
	// sandbox directly. 4 is CLOSE_RANGE_CLOEXEC; a kernel without it
	// (before 5.11) leaves the work to the helper.
	_ = unix.CloseRange(3, ^uint(0), 4)
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	cmds := subcommands()
	if len(args) >= 2 && args[0] == "help" {
		if _, ok := cmds[args[1]]; ok {
			// "airlock help run" is "airlock run --help".
			return dispatch([]string{args[1], "--help"}, stdout, stderr)
		}
	}
	if len(args) == 0 && os.Getenv("CLAUDE_PROJECT_DIR") != "" {
		// Claude Code runs hooks with CLAUDE_PROJECT_DIR set. One that
		// ignores the exec form's "args" of the entry 'airlock init'
		// writes runs airlock alone; any status but 2 would let the call
		// through.
		fmt.Fprintln(stderr, "airlock: blocked: run without arguments under Claude Code, which means this Claude Code ignores the hook's \"args\"; update Claude Code, or write the hook as \"command\": \"/path/to/airlock hook claude-code\"")
		return exitBlock
	}
	if len(args) == 0 {
		fmt.Fprintln(stderr, "airlock: name a command, as in 'airlock run -- CMD'; run 'airlock --help' for the list")
		return exitUsage
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout, cmds)
		return 0
	}
	if args[0] == "--version" || args[0] == "version" {
		fmt.Fprintln(stdout, cli.Version())
		return 0
	}
	c, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "airlock: unknown command %q; run 'airlock --help' for the list\n", args[0])
		return exitUsage
	}
	return c.run(args[1:], stdout, stderr)
}

// exitUsage is cli.ExitUsage, the status of every usage error but the
// hook's.
const exitUsage = cli.ExitUsage

func usage(w io.Writer, cmds map[string]subcommand) {
	fmt.Fprint(w, `airlock: a gate and an OS-enforced sandbox for the tool calls of AI agents.

Usage: airlock COMMAND [FLAGS] [ARGS]

Commands:
`)
	for _, name := range []string{"run", "doctor", "policy", "audit", "hook", "init", "mcp", "exec", "serve"} {
		fmt.Fprintf(w, "  %-8s %s\n", name, cmds[name].summary)
	}
	fmt.Fprint(w, `
Run 'airlock COMMAND --help' for the flags of one command.
`)
}
