package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/airlockhq/airlock/internal/visible"
	"github.com/airlockhq/airlock/server"
	"github.com/airlockhq/airlock/server/store"
)

const serveTokenHelp = `Usage: airlock serve token create --role agent|person|operator [--agent NAME] [--user NAME]
                                 [--workspace DIR]... [--expires 24h] [--name NAME] [--db DSN]
       airlock serve token list [--db DSN]
       airlock serve token revoke ID [--db DSN]

create makes a bearer token for the daemon's API and prints it once, on
stdout. The database keeps only its SHA-256: a lost token cannot be shown
again; make another. The daemon need not be stopped.

  --role agent     decides and runs code as --agent NAME (required), sees
                   only that agent's approvals, never answers
  --role person    answers approvals, lists them, reads the audit
  --role operator  a person who also manages tokens and workspaces

--workspace (repeatable) limits the token to those directories; without
it the token acts on every workspace registered with 'airlock serve
workspace add'. --expires makes it stop working after that long.

list shows every token (never its text); revoke refuses a token from the
next request on, on every daemon sharing the database.

Flags:
`

func runServeToken(args []string, stdout, stderr io.Writer) int {
	var spec server.TokenSpec
	var role string
	var ws stringList
	var expires time.Duration
	return runServeAdmin(serveAdmin{
		name:  "airlock serve token",
		help:  serveTokenHelp,
		usage: "write 'airlock serve token create --role agent|person|operator ...', 'airlock serve token list' or 'airlock serve token revoke ID'",
		subs: map[string]string{
			"create": "",
			"list":   "",
			"revoke": "the token's id (tok_..., from 'airlock serve token list')",
		},
		flags: func(sub string, fs *flag.FlagSet) {
			if sub != "create" {
				return
			}
			fs.StringVar(&spec.Name, "name", "", "what the token is for, shown in listings")
			fs.StringVar(&role, "role", "", "`ROLE`: agent, person or operator (required)")
			fs.StringVar(&spec.Agent, "agent", "", "the agent an agent token acts as")
			fs.StringVar(&spec.User, "user", "", "the user an agent token's calls run for")
			fs.Var(&ws, "workspace", "a `DIR` the token may act on (repeat for more; default: every registered one)")
			fs.DurationVar(&expires, "expires", 0, "the token stops working after this `DURATION`, such as 24h (default: never)")
		},
		check: func(sub string) string {
			if sub != "create" {
				return ""
			}
			if role == "" {
				return "--role is required: agent (with --agent NAME), person or operator"
			}
			if expires < 0 {
				return "--expires must be positive, such as 24h"
			}
			spec.Role, spec.TTL = store.Role(role), expires
			for _, d := range ws {
				spec.Workspaces = append(spec.Workspaces, absDir(d))
			}
			return ""
		},
		usageErr: server.ErrTokenSpec,
		run: func(ctx context.Context, st store.Store, sub, id string) error {
			switch sub {
			case "create":
				text, t, err := server.CreateToken(ctx, st, spec, time.Now())
				if err != nil {
					return err
				}
				fmt.Fprintln(stdout, text)
				fmt.Fprintf(stderr, "airlock: %s token %s created; it is shown only this once\n", t.Role, t.ID)
			case "list":
				list, err := st.Tokens(ctx)
				if err != nil {
					return err
				}
				printTokens(stdout, list, time.Now())
			case "revoke":
				if err := st.RevokeToken(ctx, id, time.Now()); err != nil {
					if errors.Is(err, store.ErrNotFound) {
						err = fmt.Errorf("no token has the id %s; see 'airlock serve token list'", id)
					}
					return err
				}
				fmt.Fprintf(stderr, "airlock: token %s revoked\n", visible.Text(id))
			}
			return nil
		},
	}, args, stdout, stderr)
}

func printTokens(w io.Writer, list []store.Token, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tROLE\tAGENT\tNAME\tWORKSPACES\tCREATED\tSTATE")
	for _, t := range list {
		state := "active"
		switch {
		case !t.RevokedAt.IsZero():
			state = "revoked " + t.RevokedAt.UTC().Format(time.RFC3339)
		case !t.ExpiresAt.IsZero() && !now.Before(t.ExpiresAt):
			state = "expired " + t.ExpiresAt.UTC().Format(time.RFC3339)
		case !t.ExpiresAt.IsZero():
			state = "expires " + t.ExpiresAt.UTC().Format(time.RFC3339)
		}
		ws := "(registered)"
		if len(t.Workspaces) > 0 {
			ws = strings.Join(t.Workspaces, ",")
		}
		dash := func(s string) string {
			if s == "" {
				return "-"
			}
			return visible.Text(s)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Role, dash(t.Agent), dash(t.Name), visible.Text(ws),
			t.CreatedAt.UTC().Format(time.RFC3339), state)
	}
	tw.Flush()
}
