// Command airlock-server holds airlock's long-lived and provider-backed
// commands: mcp (serve, proxy), exec and serve. Users type "airlock mcp
// ...", "airlock exec ..." and "airlock serve ...": airlock (cmd/airlock)
// finds this binary beside itself and execs it with the same arguments.
//
// These commands are apart because of what they link (the Docker client,
// SQLite, PostgreSQL, the MCP SDK): every start of a Go binary pays for
// the package inits and page faults of all it links, and airlock's run
// and hook start once per tool call. These start once per session or
// daemon, or drive a container whose own start dwarfs theirs.
package main

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	// mcp's and exec's runs serve their networks in this process.
	_ "github.com/airlockhq/airlock/egress/netstack"
	"github.com/airlockhq/airlock/internal/cli"
)

func main() {
	// As airlock's main: descriptors the caller left open without
	// close-on-exec are not the sandboxed commands' business (4 is
	// CLOSE_RANGE_CLOEXEC).
	_ = unix.CloseRange(3, ^uint(0), 4)
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

// commands are this binary's entries; their summaries are in airlock's
// usage, which lists every command of both binaries.
func commands() map[string]cli.CommandFunc {
	return map[string]cli.CommandFunc{"mcp": runMCP, "exec": runExec, "serve": runServe}
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "--version" || args[0] == "version") {
		fmt.Fprintln(stdout, cli.Version())
		return 0
	}
	if len(args) >= 2 && args[0] == "help" {
		args = []string{args[1], "--help"}
	}
	if len(args) > 0 {
		if run, ok := commands()[args[0]]; ok {
			return run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintln(stderr, "airlock-server: name mcp, exec or serve, as 'airlock' does for you ('airlock mcp serve', 'airlock serve'); run 'airlock --help' for every command")
	return cli.ExitUsage
}
