package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/airlockhq/airlock/internal/cli"
	"github.com/airlockhq/airlock/internal/visible"
	"github.com/airlockhq/airlock/server/store"
)

// serveAdmin describes one of the daemon's administration commands
// ('airlock serve token', 'airlock serve workspace'): subcommands that
// act on the daemon's database, so they share their parsing, the --db
// flag and the opening of the store, and differ only in what they do.
type serveAdmin struct {
	name  string // the command, such as "airlock serve token"
	help  string
	usage string // what to write when the subcommand is missing or unknown
	// subs maps each subcommand to what its one positional argument
	// is, for the message when it is missing, or to "" when it takes
	// none.
	subs map[string]string
	// flags adds sub's own flags to fs (nil: none).
	flags func(sub string, fs *flag.FlagSet)
	// check, after parsing, says what is wrong with sub's flags, or "",
	// and finishes whatever run needs from them (nil: nothing to check).
	check func(sub string) string
	// usageErr marks the errors from run that are the caller's usage
	// mistake, which exit with exitServeUsage rather than 1 (nil: none).
	usageErr error
	// run does sub against the opened store; arg is its positional
	// argument.
	run func(ctx context.Context, st store.Store, sub, arg string) error
}

// runServeAdmin parses args as a's subcommand and its flags, opens the
// database and runs the subcommand, returning the exit code.
func runServeAdmin(a serveAdmin, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprint(stdout, a.help)
		return 0
	}
	if len(args) == 0 {
		fmt.Fprintf(stderr, "%s: %s\n", a.name, a.usage)
		return exitServeUsage
	}
	sub := args[0]
	argName, known := a.subs[sub]
	if !known {
		fmt.Fprintf(stderr, "%s: %s\n", a.name, a.usage)
		return exitServeUsage
	}
	fs := flag.NewFlagSet(a.name+" "+sub, flag.ContinueOnError)
	dsn := fs.String("db", "", "the database: sqlite:`PATH` or postgres://... (default sqlite:"+defaultDBPath()+")")
	if a.flags != nil {
		a.flags(sub, fs)
	}
	help := func(w io.Writer) { fmt.Fprint(w, a.help) }
	// The positional argument may come before the flags or after them.
	rest := args[1:]
	var arg string
	if argName != "" && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		arg, rest = rest[0], rest[1:]
	}
	if code, ok := cli.ParseCommandFlags(fs, rest, help, exitServeUsage, stdout, stderr); !ok {
		return code
	}
	if argName != "" && arg == "" && fs.NArg() == 1 {
		arg = fs.Arg(0)
	} else if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %s\n", fs.Name(), visible.Text(fs.Arg(0)))
		return exitServeUsage
	}
	if argName != "" && arg == "" {
		fmt.Fprintf(stderr, "%s: name %s\n", fs.Name(), argName)
		return exitServeUsage
	}
	if a.check != nil {
		if msg := a.check(sub); msg != "" {
			fmt.Fprintf(stderr, "%s: %s\n", fs.Name(), msg)
			return exitServeUsage
		}
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "%s: %s\n", fs.Name(), visible.Text(err.Error()))
		if a.usageErr != nil && errors.Is(err, a.usageErr) {
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
	if err := a.run(ctx, st, sub, arg); err != nil {
		return fail(err)
	}
	return 0
}
