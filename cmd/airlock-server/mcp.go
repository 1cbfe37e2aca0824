package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockhq/airlock/audit"
	airlockmcp "github.com/airlockhq/airlock/integrations/mcp"
	"github.com/airlockhq/airlock/internal/cli"
	"github.com/airlockhq/airlock/internal/visible"
	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/sandbox"
	"github.com/airlockhq/airlock/workspace"
)

const mcpUsage = `Usage: airlock mcp COMMAND [FLAGS]

Commands:
  serve   an MCP server whose tools (run_command, read_file, write_file,
          edit_file, list_directory) are decided by the gate and run in the
          sandbox
  proxy   run another MCP server inside the sandbox and gate its tool calls

Run 'airlock mcp COMMAND --help' for the flags of one command.

An MCP client starts airlock like any stdio server. For example, in
.mcp.json (Claude Code), claude_desktop_config.json or .cursor/mcp.json:

  {
    "mcpServers": {
      "airlock": {
        "command": "airlock",
        "args": ["mcp", "serve", "--workspace", "/path/to/project"]
      },
      "fs": {
        "command": "airlock",
        "args": ["mcp", "proxy", "--name", "fs", "--workspace", "/path/to/project", "--",
                 "mcp-server-filesystem", "/path/to/project"]
      }
    }
  }
`

func runMCP(args []string, stdout, stderr io.Writer) int {
	return cli.RunGroup("mcp", mcpUsage, map[string]cli.CommandFunc{"serve": mcpServe, "proxy": mcpProxy}, args, stdout, stderr)
}

// mcpFlags are the flags serve and proxy share: the profile, where rules
// come from, and the audit log.
type mcpFlags struct {
	pf            cli.ProfileFlags
	managed, user string
	noClaude      bool
	auditPath     string
}

func (m *mcpFlags) register(fs *flag.FlagSet) {
	m.pf.Register(fs)
	fs.StringVar(&m.managed, "managed", "", "the managed layer's rule `FILE` (default "+rules.DefaultManagedPath+"; - for none)")
	fs.StringVar(&m.user, "user", "", "the user layer's rule `FILE` (default ~/.config/airlock/policy.toml; - for none)")
	fs.BoolVar(&m.noClaude, "no-claude", false, "do not read .claude/settings.json and .claude/settings.local.json")
	fs.StringVar(&m.auditPath, "audit", "", "append every decision and run to the audit log at `PATH` (\"default\": "+audit.DefaultPath()+")")
}

// gate loads the workspace's policy (workspace.Load) and opens the audit
// log. For a long-lived server (the proxy's) the output and wall-time
// budgets apply only when a flag sets them.
func (m *mcpFlags) gate(longLived bool) (airlockmcp.Gate, error) {
	o, err := m.pf.Overrides()
	if err != nil {
		return airlockmcp.Gate{}, err
	}
	o.LongLived = longLived
	o.Managed, o.User, o.NoClaude = m.managed, m.user, m.noClaude
	pol, err := workspace.Load("", o)
	if err != nil {
		return airlockmcp.Gate{}, err
	}
	g := airlockmcp.Gate{Profile: pol.Profile, Rules: pol.Rules, Masked: pol.Masked}
	if m.auditPath != "" {
		path := m.auditPath
		if path == "default" {
			path = audit.DefaultPath()
		}
		if g.Audit, err = audit.Open(path); err != nil {
			return airlockmcp.Gate{}, err
		}
	}
	return g, nil
}

// signalContext ends at SIGINT, SIGTERM or SIGHUP.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
}

func mcpServe(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("airlock mcp serve", `Usage: airlock mcp serve [--workspace DIR] [--http ADDR] [FLAGS]

Serves MCP on stdin and stdout (or streamable HTTP at ADDR with --http)
with five tools:

  run_command    {command, timeout_seconds?}     decided as Bash
  read_file      {path}                          decided as Read
  write_file     {path, content}                 decided as Write
  edit_file      {path, old_string, new_string}  decided as Edit
  list_directory {path}                          decided as Glob

Paths are relative to the workspace or absolute. Every allowed call runs
in the sandbox with the workspace's profile. A denied call is a tool result
with isError set and the gate's reason. When the gate says ask, the client
is asked through MCP elicitation; a client without elicitation gets a
refusal that says which rule would allow it (.airlock/policy.toml).

Client configuration (.mcp.json, claude_desktop_config.json, ...):

  {"mcpServers": {"airlock": {"command": "airlock",
    "args": ["mcp", "serve", "--workspace", "/path/to/project"]}}}

With --http, on a loopback address only, every request needs the header
"Authorization: Bearer TOKEN" with the token in --token-file (made there,
mode 0600, on the first start); requests without it get 401, and requests
whose Host is not a loopback name (DNS rebinding) or that come from
another origin in a browser get 403.

Flags:
`, stdout, stderr)
	var m mcpFlags
	m.register(fs)
	httpAddr := fs.String("http", "", "serve streamable HTTP at `ADDR`, a loopback address (e.g. 127.0.0.1:7421), instead of stdio")
	tokenFile := fs.String("token-file", "", "with --http, the `FILE` holding the bearer token clients must send (made, mode 0600, if missing; default "+airlockmcp.DefaultTokenPath()+")")
	if code := cli.ParseFlags(fs, args, cli.ExitUsage, stdout, stderr); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "airlock mcp serve: takes no arguments")
		return cli.ExitUsage
	}
	g, err := m.gate(false)
	if err != nil {
		fmt.Fprintln(stderr, "airlock mcp serve:", visible.Text(err.Error()))
		return 1
	}
	if g.Audit != nil {
		defer g.Audit.Close()
	}
	// The server runs one tool call after another: each run's helper is
	// cloned while the one before runs.
	ex, err := sandbox.NewWithOptions(g.Profile, sandbox.Options{KeepWarm: true})
	if err != nil {
		fmt.Fprintln(stderr, "airlock mcp serve:", visible.Text(err.Error()))
		return 1
	}
	defer ex.Close()
	srv, err := airlockmcp.NewServer(airlockmcp.ServerOptions{Gate: g, Executor: ex, Version: cli.Release()})
	if err != nil {
		fmt.Fprintln(stderr, "airlock mcp serve:", visible.Text(err.Error()))
		return 1
	}
	ctx, cancel := signalContext()
	defer cancel()
	if *httpAddr == "" {
		if err := srv.ServeStdio(ctx); err != nil && ctx.Err() == nil {
			fmt.Fprintln(stderr, "airlock mcp serve:", visible.Text(err.Error()))
			return 1
		}
		return 0
	}
	return serveHTTP(ctx, *httpAddr, *tokenFile, srv.HTTPHandler(), g.Profile.Workspace(), stderr)
}

// serveHTTP serves h at addr until ctx ends. The first line on stderr
// names the URL, with the port the system chose for ":0".
func serveHTTP(ctx context.Context, addr, tokenPath string, h http.Handler, workspace string, stderr io.Writer) int {
	if !loopbackAddr(addr) {
		fmt.Fprintf(stderr, "airlock mcp serve: --http %s: listen on a loopback address (127.0.0.1:PORT, [::1]:PORT, localhost:PORT); "+
			"the token is sent in clear text over plain HTTP, so the server is for this machine only\n", visible.Text(addr))
		return cli.ExitUsage
	}
	h, tokenPath, note, code := withToken(tokenPath, h, stderr)
	if code >= 0 {
		return code
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(stderr, "airlock mcp serve:", visible.Text(err.Error()))
		return 1
	}
	fmt.Fprintf(stderr, "airlock mcp serve: listening on http://%s/ (workspace %s; clients send Authorization: Bearer with the token in %s)\n", ln.Addr(), visible.Text(workspace), visible.Text(tokenPath))
	fmt.Fprint(stderr, note)
	hs := &http.Server{Handler: h}
	go func() {
		<-ctx.Done()
		_ = hs.Close()
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(stderr, "airlock mcp serve:", visible.Text(err.Error()))
		return 1
	}
	return 0
}

// loopbackAddr reports whether addr (HOST:PORT) names a loopback host.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

func mcpProxy(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("airlock mcp proxy", `Usage: airlock mcp proxy [--name NAME] [--profile P] [--net ...] [FLAGS] -- CMD [ARGS...]

Starts the MCP server CMD inside the sandbox with its own profile (no
network unless --net allows it), relays it live on stdin and stdout (tools,
resources and subscriptions, prompts, completions, progress, cancellation,
the client's roots), and decides every tools/call as the tool
mcp__NAME__TOOL: rules such as

  [[rule]]
  effect = "allow"
  match  = "mcp__fs__read_text_file"   # one tool; "mcp__fs" for all of them

in the workspace's .airlock/policy.toml; mcp__fs__write_file(path:/tmp/*)
matches only the calls whose argument "path" matches the pattern. A call no rule allows is asked
through MCP elicitation, or refused when the client cannot ask. A denied
call is a tool result with isError set and the reason. The server's own
requests are decided the same way: sampling as
mcp__NAME__sampling__createMessage (an ask is put to the person through
elicitation), elicitation as mcp__NAME__elicitation__create (only a deny
refuses it). The server's whole process tree ends with the proxy. The server lives as long as the
client, so the profile's output and wall-time budgets apply to it only
when --max-output or --timeout sets them.

Client configuration:

  {"mcpServers": {"fs": {"command": "airlock",
    "args": ["mcp", "proxy", "--name", "fs", "--workspace", "/path/to/project", "--",
             "mcp-server-filesystem", "/path/to/project"]}}}

Flags:
`, stdout, stderr)
	var m mcpFlags
	m.register(fs)
	name := fs.String("name", "", "the server's `NAME` in mcp__NAME__TOOL rules (default: CMD's base name)")
	if code := cli.ParseFlags(fs, args, cli.ExitUsage, stdout, stderr); code >= 0 {
		return code
	}
	argv := fs.Args()
	if len(argv) == 0 {
		fmt.Fprintln(stderr, "airlock mcp proxy: no server command given; usage: airlock mcp proxy [FLAGS] -- CMD [ARGS...]")
		return cli.ExitUsage
	}
	if *name == "" {
		*name = defaultServerName(argv[0])
	}
	g, err := m.gate(true)
	if err != nil {
		fmt.Fprintln(stderr, "airlock mcp proxy:", visible.Text(err.Error()))
		return 1
	}
	if g.Audit != nil {
		defer g.Audit.Close()
	}
	ex, err := sandbox.New(g.Profile)
	if err != nil {
		fmt.Fprintln(stderr, "airlock mcp proxy:", visible.Text(err.Error()))
		return 1
	}
	defer ex.Close()
	ctx, cancel := signalContext()
	defer cancel()
	p, err := airlockmcp.StartProxy(ctx, airlockmcp.ProxyOptions{
		Gate: g, Name: *name, Executor: ex, Args: argv, Stderr: stderr, Version: cli.Release(),
	})
	if err != nil {
		fmt.Fprintln(stderr, "airlock mcp proxy:", visible.Text(err.Error()))
		return 1
	}
	if err := p.Run(ctx, &sdk.StdioTransport{}); err != nil && ctx.Err() == nil {
		fmt.Fprintln(stderr, "airlock mcp proxy:", visible.Text(err.Error()))
		return 1
	}
	return 0
}

// defaultServerName is CMD's base name without extension, with characters
// a rule name cannot hold replaced by "-".
func defaultServerName(cmd string) string {
	base := strings.TrimSuffix(filepath.Base(cmd), filepath.Ext(cmd))
	var b strings.Builder
	for _, c := range base {
		if c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	name := strings.ReplaceAll(b.String(), "__", "_")
	if name == "" {
		return "server"
	}
	return name
}
