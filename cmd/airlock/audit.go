package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/airlockhq/airlock/audit"
	"github.com/airlockhq/airlock/internal/cli"
	"github.com/airlockhq/airlock/internal/visible"
)

// auditOptions are the parsed flags of 'airlock audit'.
type auditOptions struct {
	path      string
	follow    bool
	json      bool
	types     []string // empty: every type
	execution string   // empty: every execution
}

func runAudit(args []string, stdout, stderr io.Writer) int {
	opts, code, ok := parseAuditFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	ctx := context.Background()
	if opts.follow {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	return printAudit(ctx, opts, stdout, stderr)
}

// parseAuditFlags returns the options, or ok=false and the exit status.
func parseAuditFlags(args []string, stdout, stderr io.Writer) (opts auditOptions, code int, ok bool) {
	flags := flag.NewFlagSet("airlock audit", flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.StringVar(&opts.path, "log", audit.DefaultPath(), "read the audit log at `PATH`")
	flags.BoolVar(&opts.follow, "follow", false, "keep printing new events until interrupted (Ctrl-C)")
	flags.BoolVar(&opts.json, "json", false, "print events as JSON lines instead of one readable line each")
	types := flags.String("type", "", "print only events of these `TYPES` (comma-separated: decision,spawn,enforcement,exit)")
	flags.StringVar(&opts.execution, "execution", "", "print only the events of execution `ID`")
	help := func(w io.Writer) {
		fmt.Fprint(w, `Usage: airlock audit [--log PATH] [--follow] [--json] [--type TYPES] [--execution ID]

Prints the audit log, one line per event: time, type, decision, tool,
requirement, rule and layer, profile fingerprint (abbreviated), reason and
execution id. --json prints every field, Detail included.

The log is, in order of preference: --log PATH; $AIRLOCK_AUDIT_LOG;
$XDG_STATE_HOME/airlock/audit.jsonl; ~/.local/state/airlock/audit.jsonl.
Here that is: `+audit.DefaultPath()+`

Flags:
`)
	}
	if code, ok := cli.ParseCommandFlags(flags, args, help, exitUsage, stdout, stderr); !ok {
		return opts, code, false
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "airlock audit: unexpected argument %q; run 'airlock audit --help' for the flags\n", flags.Arg(0))
		return opts, exitUsage, false
	}
	if opts.path == "" {
		fmt.Fprintln(stderr, "airlock audit: no log path (the home directory is unknown); pass --log PATH or set AIRLOCK_AUDIT_LOG")
		return opts, exitUsage, false
	}
	known := []string{audit.TypeDecision, audit.TypeSpawn, audit.TypeEnforcement, audit.TypeExit}
	if *types != "" {
		for t := range strings.SplitSeq(*types, ",") {
			t = strings.TrimSpace(t)
			if !slices.Contains(known, t) {
				fmt.Fprintf(stderr, "airlock audit: unknown event type %q in --type; use %s\n", t, strings.Join(known, ", "))
				return opts, exitUsage, false
			}
			opts.types = append(opts.types, t)
		}
	}
	return opts, 0, true
}

// printAudit prints the log as opts say, following it until ctx is done
// when opts.follow is set.
func printAudit(ctx context.Context, opts auditOptions, stdout, stderr io.Writer) int {
	show := func(e audit.Event) error {
		if len(opts.types) > 0 && !slices.Contains(opts.types, e.Type) {
			return nil
		}
		if opts.execution != "" && e.ExecutionID != opts.execution {
			return nil
		}
		if opts.json {
			line, err := json.Marshal(e)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(stdout, "%s\n", line)
			return err
		}
		_, err := fmt.Fprintln(stdout, formatEvent(e))
		return err
	}

	if opts.follow {
		if _, err := os.Stat(opts.path); errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(stderr, "airlock audit: no audit log at %s yet; waiting for it\n", opts.path)
		}
		err := audit.Follow(ctx, opts.path, show)
		if err != nil && ctx.Err() == nil {
			fmt.Fprintln(stderr, "airlock audit:", err)
			return 1
		}
		return 0
	}

	f, err := os.Open(opts.path)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stderr, "airlock audit: no audit log at %s yet\n", opts.path)
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "airlock audit:", err)
		return 1
	}
	defer f.Close()
	err = audit.Read(f, show)
	var torn *audit.TornLineError
	switch {
	case errors.As(err, &torn):
		fmt.Fprintf(stderr, "airlock audit: warning: %s: skipped line(s) %s that are not events (torn by a crash or damaged)\n",
			opts.path, joinInts(torn.Lines, 10))
	case err != nil:
		fmt.Fprintf(stderr, "airlock audit: %s: %v\n", opts.path, err)
		return 1
	}
	return 0
}

// formatEvent renders one event on one line. Every value comes from an
// agent or a tool and is printed to a terminal, so anything that is not
// plainly printable is quoted rather than passed through.
func formatEvent(e audit.Event) string {
	decision := e.Decision
	if decision == "" {
		decision = "-"
	}
	parts := []string{
		e.Time.Local().Format("2006-01-02T15:04:05.000Z07:00"),
		fmt.Sprintf("%-11s", printable(e.Type)),
		fmt.Sprintf("%-5s", printable(decision)),
	}
	add := func(prefix, v string) {
		if v != "" {
			parts = append(parts, prefix+printable(v))
		}
	}
	add("", e.Tool)
	if r := e.Requirement; r != nil {
		parts = append(parts, printable(r.Kind)+"("+printable(r.Target)+")")
	}
	add("rule=", e.Rule)
	add("layer=", e.Layer)
	profile := e.Profile
	if len(profile) > 12 { // a fingerprint; its head is enough to tell profiles apart
		profile = profile[:12]
	}
	add("profile=", profile)
	add("", e.Reason)
	add("exec=", e.ExecutionID)
	add("session=", e.SessionID)
	add("tool_use=", e.ToolUseID)
	return strings.Join(parts, "  ")
}

// printable returns s as a terminal may show it: unchanged if every rune
// in it is printable, else Go-quoted (see internal/visible), so that no
// escape sequence or newline from the log reaches the terminal.
func printable(s string) string { return visible.Text(s) }

// joinInts lists at most limit numbers, then says how many more there are.
func joinInts(ns []int, limit int) string {
	var b strings.Builder
	for i, n := range ns {
		if i == limit {
			fmt.Fprintf(&b, " and %d more", len(ns)-limit)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(n))
	}
	return b.String()
}
