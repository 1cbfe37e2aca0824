// Package binaries is the one place that says what each of airlock's
// executables holds: which subcommands it runs and what it must not
// link. cmd/airlock hands the commands of airlock-server over by exec
// (its hand-off table is checked against Server's Commands), and
// TestLeanImports holds each binary's link set to Excludes with
// `go list -deps`.
//
// Why there are three: every start of a Go program pays the runtime and
// every package init of the binary, and the page faults of what it maps,
// before main. airlock starts once per tool call, as the hook and as the
// supervisor of a run, and the same file is re-executed (/proc/self/exe)
// as the sandbox's stage-2 helper and guard proxy, so each run starts it
// three times; what it links is paid on each. airlock-server's commands
// start once per session or daemon, or drive a container whose own start
// dwarfs theirs, so the heavy dependencies live there. airlock-gateway
// holds gVisor's netstack, the egress gateway a run with a network
// starts once (egress/remote).
//
// The package holds only constants and functions that build the table
// when called: importing it adds nothing to a start.
package binaries

import "strings"

// The executables' file names. They are built into one directory
// (go build -o DIR/ ./cmd/...), and airlock looks for the others beside
// its own real path.
const (
	Airlock = "airlock"
	Server  = "airlock-server"
	Gateway = "airlock-gateway"
)

// Binary is one executable built from this module.
type Binary struct {
	// Name is its file name: Airlock, Server or Gateway.
	Name string
	// Main is its main package, relative to the module's root.
	Main string
	// Commands are the subcommands it runs itself. A command of another
	// binary typed to airlock is handed to that binary.
	Commands []string
	// Excludes are what it must not link: an import path, or a prefix of
	// import paths when it ends in "/".
	Excludes []string
	// Includes are packages it links and must: the control that the
	// check of Excludes reads a real dependency list, and that a heavy
	// dependency listed here for another binary still lives somewhere.
	Includes []string
}

// heavy are what airlock-server links and airlock must not: the Docker
// client (its regexps alone were 1 ms of every start), SQLite,
// PostgreSQL, the MCP SDK and what they bring (OpenTelemetry, net/http,
// gob). With them airlock was 25 MB and 195 package inits; without, 9.8 MB
// and 98.
func heavy() []string {
	return []string{
		"github.com/airlockhq/airlock/provider/docker",
		"github.com/airlockhq/airlock/server",
		"github.com/airlockhq/airlock/integrations/mcp",
		"github.com/moby/",
		"github.com/docker/",
		"github.com/containerd/",
		"github.com/opencontainers/",
		"github.com/jackc/",
		"modernc.org/",
		"github.com/modelcontextprotocol/",
		"github.com/google/jsonschema-go",
		"go.opentelemetry.io/",
		"net/http",
		"encoding/gob",
	}
}

// netstack is the egress gateway's userspace TCP/IP stack: gVisor, and
// the one package of the module that imports it.
func netstack() []string {
	return []string{
		"gvisor.dev/",
		"github.com/airlockhq/airlock/egress/netstack",
	}
}

// All returns every binary, airlock first.
func All() []Binary {
	return []Binary{
		{
			Name: Airlock,
			Main: "cmd/airlock",
			// run and hook start once per tool call; doctor, policy,
			// audit and init are small and share their packages.
			Commands: []string{"run", "hook", "doctor", "policy", "audit", "init"},
			// No netstack either: a run with a network serves it from
			// airlock-gateway (egress/remote). gVisor was 2.8 MB of the
			// binary and 34 of its package inits, paid by every hook
			// call and three times by every run (docs/BENCHMARKS.md,
			// i21slim).
			Excludes: append(heavy(), netstack()...),
			Includes: []string{
				"github.com/airlockhq/airlock/sandbox",
				"github.com/airlockhq/airlock/integrations/claudecode",
				"github.com/airlockhq/airlock/egress/remote",
			},
		},
		{
			Name: Gateway,
			Main: "cmd/airlock-gateway",
			// One run's egress gateway, started by airlock run; it runs
			// no subcommand and needs none of the heavy dependencies.
			Excludes: heavy(),
			Includes: []string{
				"github.com/airlockhq/airlock/egress/netstack",
				"github.com/airlockhq/airlock/egress/remote",
				"gvisor.dev/gvisor/pkg/tcpip/stack",
			},
		},
		{
			Name:     Server,
			Main:     "cmd/airlock-server",
			Commands: []string{"mcp", "exec", "serve"},
			Includes: []string{
				"modernc.org/sqlite",
				"github.com/jackc/pgx/v5",
				"github.com/modelcontextprotocol/go-sdk/mcp",
				"github.com/airlockhq/airlock/provider/docker",
				"github.com/airlockhq/airlock/server",
			},
		},
	}
}

// Of returns the binary named name; ok is false for a name not in All.
func Of(name string) (b Binary, ok bool) {
	for _, b := range All() {
		if b.Name == name {
			return b, true
		}
	}
	return Binary{}, false
}

// Holder returns the binary that runs command; ok is false for a
// command none runs.
func Holder(command string) (b Binary, ok bool) {
	for _, b := range All() {
		for _, c := range b.Commands {
			if c == command {
				return b, true
			}
		}
	}
	return Binary{}, false
}

// Excluded reports whether the import path pkg is one of b's Excludes.
func (b Binary) Excluded(pkg string) bool {
	for _, x := range b.Excludes {
		if pkg == x || strings.HasPrefix(pkg, x) && (strings.HasSuffix(x, "/") || strings.HasPrefix(pkg, x+"/")) {
			return true
		}
	}
	return false
}
