package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/airlockhq/airlock/internal/visible"
	"github.com/airlockhq/airlock/server"
	"github.com/airlockhq/airlock/server/store"
)

const serveWorkspaceHelp = `Usage: airlock serve workspace add DIR [--db DSN]
       airlock serve workspace list [--db DSN]
       airlock serve workspace remove DIR [--db DSN]

The daemon decides calls, reads files for approval views and writes the
rules "always" answers save only in workspaces an operator registered
here (or that a token names with --workspace). DIR is registered by its
one canonical spelling: absolute, with every symlink resolved.

Flags:
`

func runServeWorkspace(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprint(stdout, serveWorkspaceHelp)
		return 0
	}
	if len(args) == 0 || args[0] != "add" && args[0] != "list" && args[0] != "remove" {
		fmt.Fprintln(stderr, "airlock serve workspace: write 'airlock serve workspace add DIR', 'list' or 'remove DIR'")
		return exitServeUsage
	}
	sub := args[0]
	fs := flag.NewFlagSet("airlock serve workspace "+sub, flag.ContinueOnError)
	dsn := fs.String("db", "", "the database: sqlite:`PATH` or postgres://... (default sqlite:"+defaultDBPath()+")")
	help := func(w io.Writer) { fmt.Fprint(w, serveWorkspaceHelp) }
	rest := args[1:]
	var dir string
	if sub != "list" && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		dir, rest = rest[0], rest[1:]
	}
	if code, ok := parseCommandFlags(fs, rest, help, exitServeUsage, stdout, stderr); !ok {
		return code
	}
	if sub != "list" && dir == "" && fs.NArg() == 1 {
		dir = fs.Arg(0)
	} else if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %s\n", fs.Name(), visible.Text(fs.Arg(0)))
		return exitServeUsage
	}
	if sub != "list" && dir == "" {
		fmt.Fprintf(stderr, "%s: name the workspace's directory\n", fs.Name())
		return exitServeUsage
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "%s: %s\n", fs.Name(), visible.Text(err.Error()))
		return 1
	}
	ctx := context.Background()
	st, err := openStore(ctx, *dsn)
	if err != nil {
		return fail(err)
	}
	defer st.Close()
	switch sub {
	case "add":
		p, err := server.RegisterWorkspace(ctx, st, absDir(dir), store.Workspace{AddedAt: time.Now().UTC()})
		if err != nil {
			return fail(err)
		}
		fmt.Fprintln(stdout, p)
	case "list":
		list, err := st.Workspaces(ctx)
		if err != nil {
			return fail(err)
		}
		for _, w := range list {
			fmt.Fprintln(stdout, visible.Text(w.Path))
		}
	case "remove":
		// A directory already gone is removed by the spelling it was
		// registered with.
		p := absDir(dir)
		if c, err := server.CanonicalWorkspace(p); err == nil {
			p = c
		}
		if err := st.RemoveWorkspace(ctx, p); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				err = fmt.Errorf("%s is not registered; see 'airlock serve workspace list'", p)
			}
			return fail(err)
		}
		fmt.Fprintf(stderr, "airlock: workspace %s removed\n", visible.Text(p))
	}
	return 0
}

// absDir makes a directory named on the command line absolute (relative
// to the current directory), leaving it as given when that fails.
func absDir(dir string) string {
	if p, err := filepath.Abs(dir); err == nil {
		return p
	}
	return dir
}
