package cli

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/airlockhq/airlock/internal/visible"
)

// CommandFunc runs one subcommand with its arguments and returns the exit
// status.
type CommandFunc func(args []string, stdout, stderr io.Writer) int

// RunGroup runs a command that only groups subcommands ("airlock policy
// explain"): no subcommand or an unknown one is a usage error (125, one
// line naming the commands), -h, --help and help print usage on stdout.
func RunGroup(name, usage string, cmds map[string]CommandFunc, args []string, stdout, stderr io.Writer) int {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(args) == 0 {
		fmt.Fprintf(stderr, "airlock %s: name a command: %s; run 'airlock %s --help' for what each does\n", name, strings.Join(names, ", "), name)
		return ExitUsage
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	if run, ok := cmds[args[0]]; ok {
		return run(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "airlock %s: unknown command %q; use %s (run 'airlock %s --help')\n", name, visible.Text(args[0]), strings.Join(names, ", "), name)
	return ExitUsage
}

// NewFlagSet makes a FlagSet for ParseFlags: name is the command as the
// user types it ("airlock policy explain"), usage the help's text before
// the flags.
func NewFlagSet(name, usage string, stdout, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), usage) }
	return fs
}

// ParseFlags parses args as ParseCommandFlags does (help on stdout, a
// usage error one line on stderr with status usageExit); it returns -1 to
// go on, or the exit status.
func ParseFlags(fs *flag.FlagSet, args []string, usageExit int, stdout, stderr io.Writer) int {
	usage := fs.Usage // ParseCommandFlags silences fs.Usage
	help := func(w io.Writer) {
		fs.SetOutput(w)
		usage()
	}
	if code, ok := ParseCommandFlags(fs, args, help, usageExit, stdout, stderr); !ok {
		return code
	}
	return -1
}
