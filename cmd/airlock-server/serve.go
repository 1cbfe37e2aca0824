package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/airlockhq/airlock/internal/cli"
	"github.com/airlockhq/airlock/internal/visible"
	"github.com/airlockhq/airlock/provider"
	"github.com/airlockhq/airlock/server"
	"github.com/airlockhq/airlock/server/store"
	_ "github.com/airlockhq/airlock/server/store/sqlite" // sqlite:PATH
)

// exitServeUsage is the status of a usage error, as for the rest of the CLI.
const exitServeUsage = 125

const serveHelp = `Usage: airlock serve [--addr 127.0.0.1:7420] [--db sqlite:PATH | --db postgres://...] [FLAGS]
       airlock serve token create --role agent|person|operator [--agent NAME] [--workspace DIR]... [--expires 24h]
       airlock serve token list|revoke ID
       airlock serve workspace add|list|remove DIR

The approval daemon: an HTTP JSON API (docs/API.md) that decides tool
calls with each workspace's rules and profile (as 'airlock hook
claude-code' does), holds the calls a person must answer as approvals
(answered on the page at http://ADDR/ or through the API; unanswered ones
are denied after --approval-ttl), streams them as Server-Sent Events,
serves the audit log and runs code in named sandboxes (--providers).

Every /v1 request needs 'Authorization: Bearer TOKEN'; make a token with
'airlock serve token create', which prints it once. An agent's token
decides and runs code as that agent only; a person's token answers and
reads the audit. The daemon acts only on workspaces an operator
registered ('airlock serve workspace add DIR') or a token names. The database keeps
approvals, saved rules, grants and the audit log: SQLite by default
($XDG_STATE_HOME/airlock/airlock.db or ~/.local/state/airlock/airlock.db),
or PostgreSQL for several replicas sharing them.

The daemon listens on loopback only. --allow-remote lets it listen on
other addresses: then anyone who can reach the port may try tokens, and
tokens and approvals cross the network in clear text unless a TLS proxy
stands in front.

SIGINT or SIGTERM stops it: requests in flight end (event streams and
waits are cut), then the database closes. Exit status 0 after a clean
stop, 1 when it cannot start, 125 for a usage error.

Flags:
`

func runServe(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "token" {
		return runServeToken(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "workspace" {
		return runServeWorkspace(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("airlock serve", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:7420", "listen on `HOST:PORT` (port 0 picks a free one)")
	dsn := fs.String("db", "", "the database: sqlite:`PATH` or postgres://USER@HOST/DB (default sqlite:"+defaultDBPath()+")")
	providers := fs.String("providers", "", "the sandbox catalog `FILE` for /v1/exec (default: the one 'airlock exec' finds, if any)")
	remote := fs.Bool("allow-remote", false, "allow listening on a non-loopback address")
	ttl := fs.Duration("approval-ttl", server.DefaultApprovalTTL, "how long an approval waits for an answer before it counts as denied")
	maxAgent := fs.Int("max-pending-agent", server.DefaultMaxPendingPerAgent, "at most `N` approvals pending at once per agent (more: 429)")
	maxWS := fs.Int("max-pending-workspace", server.DefaultMaxPendingPerWorkspace, "at most `N` approvals pending at once per workspace (more: 429)")
	help := func(w io.Writer) { fmt.Fprint(w, serveHelp) }
	if code, ok := cli.ParseCommandFlags(fs, args, help, exitServeUsage, stdout, stderr); !ok {
		return code
	}
	if *maxAgent <= 0 || *maxWS <= 0 {
		fmt.Fprintln(stderr, "airlock serve: --max-pending-agent and --max-pending-workspace must be positive")
		return exitServeUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "airlock serve: unexpected argument %s; the subcommands are 'token' and 'workspace'\n", visible.Text(fs.Arg(0)))
		return exitServeUsage
	}
	if *ttl <= 0 {
		fmt.Fprintln(stderr, "airlock serve: --approval-ttl must be positive, such as 5m")
		return exitServeUsage
	}
	if err := checkListenAddr(*addr, *remote); err != nil {
		fmt.Fprintln(stderr, "airlock serve:", err)
		return exitServeUsage
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "airlock serve:", visible.Text(err.Error()))
		return 1
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, err := openStore(ctx, *dsn)
	if err != nil {
		return fail(err)
	}
	defer st.Close()
	cat, err := loadServeCatalog(*providers)
	if err != nil {
		return fail(err)
	}
	if cat != nil {
		defer cat.Close()
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	srv, err := server.New(server.Config{Store: st, Policy: servePolicy, Catalog: cat, ApprovalTTL: *ttl, Log: log,
		LoopbackHosts: !*remote, MaxPendingPerAgent: *maxAgent, MaxPendingPerWorkspace: *maxWS})
	if err != nil {
		return fail(err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		srv.Close()
		return fail(fmt.Errorf("listen on %s: %w", *addr, err))
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	fmt.Fprintf(stderr, "airlock serve: listening on http://%s (database %s)\n", ln.Addr(), describeDSN(*dsn))
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err = <-served:
	case <-ctx.Done():
		fmt.Fprintln(stderr, "airlock serve: stopping")
	}
	srv.Close() // ends event streams and waits, so Shutdown does not wait for them
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if sErr := hs.Shutdown(sctx); sErr != nil {
		hs.Close()
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fail(err)
	}
	return 0
}

// checkListenAddr refuses a non-loopback address unless allowed: the
// daemon answers anyone who reaches it with a token, and speaks plain HTTP.
func checkListenAddr(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: write HOST:PORT, such as 127.0.0.1:7420", addr)
	}
	if allowRemote {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	what := host
	if host == "" {
		what = "every interface"
	}
	return fmt.Errorf("--addr %s listens on %s, not loopback: approvals would be reachable from the network over plain HTTP; use 127.0.0.1:PORT, or add --allow-remote behind a TLS proxy", addr, what)
}

func defaultDBPath() string {
	if s := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(s) {
		return filepath.Join(s, "airlock", "airlock.db")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "airlock.db"
	}
	return filepath.Join(home, ".local", "state", "airlock", "airlock.db")
}

func openStore(ctx context.Context, dsn string) (store.Store, error) {
	if dsn == "" {
		dsn = "sqlite:" + defaultDBPath()
	}
	return store.Open(ctx, dsn)
}

// describeDSN names the database without a password a DSN may hold.
func describeDSN(dsn string) string {
	if dsn == "" {
		return "sqlite:" + defaultDBPath()
	}
	if store.Scheme(dsn) == "sqlite" {
		return dsn
	}
	return store.Scheme(dsn) + " database"
}

// loadServeCatalog loads the sandbox catalog: file when given (it must
// load), else the one 'airlock exec' would find, else none.
func loadServeCatalog(file string) (*provider.Catalog, error) {
	wd, _ := os.Getwd()
	path, err := provider.FindCatalog(file, wd)
	if err != nil {
		return nil, nil // no catalog: /v1/exec answers 503
	}
	return provider.LoadCatalog(path, drivers()...)
}

// servePolicy loads a workspace's policy as the Claude Code hook does
// (workspace.Load with no overrides).
func servePolicy(ws string) (server.Policy, error) {
	p, err := cli.WorkspacePolicy(ws)
	if err != nil {
		return server.Policy{}, err
	}
	return server.Policy{Profile: p.Profile, Rules: p.Rules}, nil
}
