package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/airlockhq/airlock/internal/cli"
	"github.com/airlockhq/airlock/provider"
)

// stringList is a repeatable flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func runExec(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("airlock exec", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("sandbox", "", "the named sandbox to run in")
	config := fs.String("config", "", "the catalog `FILE` (default: .airlock/sandboxes.toml here, then ~/.config/airlock/sandboxes.toml)")
	var id provider.Identity
	fs.StringVar(&id.Agent, "agent", "", "run as this agent: only the sandboxes assigned to it (default: the operator, who may use every sandbox)")
	fs.StringVar(&id.User, "user", "", "the user the run is for (part of the scope key)")
	fs.StringVar(&id.Session, "session", "", "the session the run belongs to (part of the scope key)")
	fs.StringVar(&id.Invocation, "invocation", "", "the invocation the run belongs to (part of the scope key)")
	var inputs, outputs stringList
	fs.Var(&inputs, "input", "copy `NAME=FILE` into the working directory as NAME (repeatable)")
	fs.Var(&outputs, "output", "return working-directory file `NAME` in output_files (repeatable)")
	code := fs.String("code", "", "the program to run")
	lang := fs.String("lang", provider.LangPython, "the language of --code: python or sh")
	stdinFile := fs.String("stdin", "", "feed `FILE` to the program's standard input")
	timeout := fs.Duration("timeout", 0, "all-in deadline; at most the sandbox's (default: the sandbox's)")
	execID := fs.String("execution-id", "", "the execution id (default: a random one)")
	list := fs.Bool("list", false, "list the sandboxes the agent may use and exit")
	help := func(w io.Writer) {
		fmt.Fprint(w, `Usage: airlock exec --sandbox NAME [FLAGS] (--code CODE [--lang python|sh] | -- ARGV...)
       airlock exec --list [--agent A] [--config FILE]

Runs code in a named sandbox of the catalog (sandboxes.toml) and prints
the Result as one JSON object: status (succeeded, failed, timed_out,
output_limit_exceeded, cancelled), exit_code, stdout, stderr, timings,
execution_id. Exit status 0 whenever a Result was printed, whatever its
status; 1 with one line on stderr when nothing could run (a sandbox not
assigned to --agent, a bad catalog, an unreachable provider); 125 for usage (one line on stderr).

Flags:
`)
	}
	if code, ok := cli.ParseCommandFlags(fs, args, help, cli.ExitUsage, stdout, stderr); !ok {
		return code
	}
	// Usage errors before the catalog: they are the command line's, and
	// say so whatever state the catalog is in.
	switch {
	case *list:
	case *name == "":
		fmt.Fprintln(stderr, "airlock exec: no --sandbox given; 'airlock exec --list' shows the names you may use")
		return cli.ExitUsage
	case (*code == "") == (fs.NArg() == 0):
		fmt.Fprintln(stderr, "airlock exec: give either --code CODE or -- ARGV...")
		return cli.ExitUsage
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "airlock exec:", err)
		return 1
	}
	wd, _ := os.Getwd()
	path, err := provider.FindCatalog(*config, wd)
	if err != nil {
		return fail(err)
	}
	cat, err := provider.LoadCatalog(path, drivers()...)
	if err != nil {
		return fail(err)
	}
	defer cat.Close()
	inv := cat.Operator(id)
	if id.Agent != "" {
		inv = cat.Begin(id)
	}
	defer inv.End()
	if *list {
		return listSandboxes(stdout, inv.List())
	}
	argv := fs.Args()
	req := provider.Request{Code: *code, Argv: argv, Timeout: *timeout, ExecutionID: *execID,
		Files: map[string][]byte{}, OutputFiles: outputs}
	if *code != "" {
		req.Lang = *lang
	}
	for _, in := range inputs {
		n, file, ok := strings.Cut(in, "=")
		if !ok {
			fmt.Fprintf(stderr, "airlock exec: --input %q: write NAME=FILE\n", in)
			return cli.ExitUsage
		}
		if req.Files[n], err = readRegular(file); err != nil {
			return fail(fmt.Errorf("--input %s: %w", n, err))
		}
	}
	if *stdinFile != "" {
		if req.Stdin, err = readRegular(*stdinFile); err != nil {
			return fail(fmt.Errorf("--stdin: %w", err))
		}
	}
	h, err := inv.Sandbox(*name)
	if err != nil {
		return fail(err)
	}
	// SIGINT or SIGTERM cancels the run; the cancelled Result is printed.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := h.Execute(ctx, req)
	if err != nil {
		return fail(err)
	}
	enc := json.NewEncoder(stdout)
	if err := enc.Encode(res); err != nil {
		return fail(err)
	}
	return 0
}

// readRegular reads a file the caller named for --input or --stdin. It
// must be a regular file: a FIFO or a device would hold the command
// before any deadline starts, so it is opened without blocking and
// refused.
func readRegular(name string) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s); pass a regular file", name, st.Mode().Type())
	}
	return io.ReadAll(f)
}

func listSandboxes(w io.Writer, list []provider.Config) int {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPROVIDER\tSCOPE\tNETWORK\tTIMEOUT\tMEMORY\tCPU\tPIDS")
	for _, c := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%dMiB\t%g\t%d\n", c.Name, c.Provider, c.Scope, c.Network,
			c.Timeout.Round(time.Second), c.Memory>>20, c.CPU, c.Pids)
	}
	tw.Flush()
	return 0
}
