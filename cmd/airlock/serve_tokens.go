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
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprint(stdout, serveTokenHelp)
		return 0
	}
	if len(args) == 0 || args[0] != "create" && args[0] != "list" && args[0] != "revoke" {
		fmt.Fprintln(stderr, "airlock serve token: write 'airlock serve token create --role agent|person|operator ...', 'airlock serve token list' or 'airlock serve token revoke ID'")
		return exitServeUsage
	}
	sub := args[0]
	fs := flag.NewFlagSet("airlock serve token "+sub, flag.ContinueOnError)
	dsn := fs.String("db", "", "the database: sqlite:`PATH` or postgres://... (default sqlite:"+defaultDBPath()+")")
	var spec server.TokenSpec
	var role string
	var ws stringList
	var expires time.Duration
	if sub == "create" {
		fs.StringVar(&spec.Name, "name", "", "what the token is for, shown in listings")
		fs.StringVar(&role, "role", "", "`ROLE`: agent, person or operator (required)")
		fs.StringVar(&spec.Agent, "agent", "", "the agent an agent token acts as")
		fs.StringVar(&spec.User, "user", "", "the user an agent token's calls run for")
		fs.Var(&ws, "workspace", "a `DIR` the token may act on (repeat for more; default: every registered one)")
		fs.DurationVar(&expires, "expires", 0, "the token stops working after this `DURATION`, such as 24h (default: never)")
	}
	help := func(w io.Writer) { fmt.Fprint(w, serveTokenHelp) }
	rest := args[1:]
	var id string
	if sub == "revoke" && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		id, rest = rest[0], rest[1:]
	}
	if code, ok := parseCommandFlags(fs, rest, help, exitServeUsage, stdout, stderr); !ok {
		return code
	}
	if sub == "revoke" && id == "" && fs.NArg() == 1 {
		id = fs.Arg(0)
	} else if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %s\n", fs.Name(), visible.Text(fs.Arg(0)))
		return exitServeUsage
	}
	if sub == "revoke" && id == "" {
		fmt.Fprintln(stderr, "airlock serve token revoke: name the token's id (tok_..., from 'airlock serve token list')")
		return exitServeUsage
	}
	if sub == "create" {
		if role == "" {
			fmt.Fprintln(stderr, "airlock serve token create: --role is required: agent (with --agent NAME), person or operator")
			return exitServeUsage
		}
		if expires < 0 {
			fmt.Fprintln(stderr, "airlock serve token create: --expires must be positive, such as 24h")
			return exitServeUsage
		}
		spec.Role, spec.TTL = store.Role(role), expires
		for _, d := range ws {
			spec.Workspaces = append(spec.Workspaces, absDir(d))
		}
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "%s: %s\n", fs.Name(), visible.Text(err.Error()))
		if errors.Is(err, server.ErrTokenSpec) {
			return exitServeUsage
		}
		return 1
	}
	ctx := context.Background()
	st, err := openStore(ctx, *dsn)
	if err != nil {
		return fail(err)
	}
	defer st.Close()
	switch sub {
	case "create":
		text, t, err := server.CreateToken(ctx, st, spec, time.Now())
		if err != nil {
			return fail(err)
		}
		fmt.Fprintln(stdout, text)
		fmt.Fprintf(stderr, "airlock: %s token %s created; it is shown only this once\n", t.Role, t.ID)
	case "list":
		list, err := st.Tokens(ctx)
		if err != nil {
			return fail(err)
		}
		printTokens(stdout, list, time.Now())
	case "revoke":
		if err := st.RevokeToken(ctx, id, time.Now()); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				err = fmt.Errorf("no token has the id %s; see 'airlock serve token list'", id)
			}
			return fail(err)
		}
		fmt.Fprintf(stderr, "airlock: token %s revoked\n", visible.Text(id))
	}
	return 0
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
