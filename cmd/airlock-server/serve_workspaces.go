package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
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
	return runServeAdmin(serveAdmin{
		name:  "airlock serve workspace",
		help:  serveWorkspaceHelp,
		usage: "write 'airlock serve workspace add DIR', 'list' or 'remove DIR'",
		subs: map[string]string{
			"add":    "the workspace's directory",
			"list":   "",
			"remove": "the workspace's directory",
		},
		run: func(ctx context.Context, st store.Store, sub, dir string) error {
			switch sub {
			case "add":
				p, err := server.RegisterWorkspace(ctx, st, absDir(dir), store.Workspace{AddedAt: time.Now().UTC()})
				if err != nil {
					return err
				}
				fmt.Fprintln(stdout, p)
			case "list":
				list, err := st.Workspaces(ctx)
				if err != nil {
					return err
				}
				for _, w := range list {
					fmt.Fprintln(stdout, visible.Text(w.Path))
				}
			case "remove":
				// A directory already gone is removed by the spelling it
				// was registered with.
				p := absDir(dir)
				if c, err := server.CanonicalWorkspace(p); err == nil {
					p = c
				}
				if err := st.RemoveWorkspace(ctx, p); err != nil {
					if errors.Is(err, store.ErrNotFound) {
						err = fmt.Errorf("%s is not registered; see 'airlock serve workspace list'", p)
					}
					return err
				}
				fmt.Fprintf(stderr, "airlock: workspace %s removed\n", visible.Text(p))
			}
			return nil
		},
	}, args, stdout, stderr)
}

// absDir makes a directory named on the command line absolute (relative
// to the current directory), leaving it as given when that fails.
func absDir(dir string) string {
	if p, err := filepath.Abs(dir); err == nil {
		return p
	}
	return dir
}
