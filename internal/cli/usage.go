package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/airlockhq/airlock/internal/visible"
)

// ExitUsage is the status of a usage error in every command but the hook
// (see exitBlock): 125, as airlock run's setup failures, so that it cannot
// be mistaken for a sandboxed command's own 2.
const ExitUsage = 125

// ParseCommandFlags parses args with fs the way airlock's commands want it: asked
// for help (-h, --help) goes to stdout, spelt --flag, and ends the command
// with status 0; a usage error is one line on stderr naming the flag and
// what to write instead, with status usageExit and no dump of every flag
// (which buries the one line that matters). ok is false when the command
// must end with status code.
func ParseCommandFlags(fs *flag.FlagSet, args []string, help func(io.Writer), usageExit int, stdout, stderr io.Writer) (code int, ok bool) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		help(stdout)
		PrintFlags(stdout, fs)
		return 0, false
	}
	fmt.Fprintf(stderr, "%s: %s\n", fs.Name(), visible.Text(flagErrorLine(fs, err)))
	return usageExit, false
}

// flagErrorLine rewrites the flag package's error into one line that names
// the flag as the user spells it (--timeout) and says what to write.
func flagErrorLine(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		return fmt.Sprintf("unknown flag %s; run '%s --help' for the flags", dashes(name), fs.Name())
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return fmt.Sprintf("%s needs a value, as in %s", dashes(name), example(fs, strings.TrimLeft(name, "-")))
	}
	// invalid value "30" for flag -timeout: parse error
	// invalid boolean value "maybe" for -follow: parse error
	var value, name string
	_, scanErr := fmt.Sscanf(msg, "invalid value %q for flag %s", &value, &name)
	if scanErr != nil {
		_, scanErr = fmt.Sscanf(msg, "invalid boolean value %q for %s", &value, &name)
	}
	if scanErr == nil {
		// A flag's own Value says what it wants after the name (a
		// builtin's is only "parse error").
		_, own, _ := strings.Cut(msg, name+" ")
		name = strings.TrimSuffix(strings.TrimLeft(name, "-"), ":")
		if f := fs.Lookup(name); f != nil && own != "" && !strings.HasPrefix(fmt.Sprintf("%T", f.Value), "*flag.") {
			return fmt.Sprintf("--%s %s: %s", name, value, own)
		}
		return fmt.Sprintf("--%s %s: %s", name, value, fixFor(fs, name, value))
	}
	return msg
}

// fixFor says what to write instead of value for the flag name.
func fixFor(fs *flag.FlagSet, name, value string) string {
	f := fs.Lookup(name)
	if f == nil {
		return "invalid value"
	}
	switch f.Value.(type) {
	case interface{ IsBoolFlag() bool }:
		return "use --" + name + " alone, or --" + name + "=true or =false"
	}
	switch fmt.Sprintf("%T", f.Value) {
	case "*flag.durationValue":
		if isNumber(value) {
			return "a duration needs a unit: use " + value + "s (or ms, m, h)"
		}
		return "use a duration such as 30s, 5m or 1h30m"
	case "*flag.intValue", "*flag.int64Value", "*flag.uintValue":
		return "use a whole number"
	case "*flag.float64Value":
		return "use a number such as 1.5"
	}
	return "invalid value; run '" + fs.Name() + " --help'"
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && r != '.' {
			return false
		}
	}
	return true
}

// example is the flag as it would be written with a value: its usage
// names the value (`FILE`) or its default type does.
func example(fs *flag.FlagSet, name string) string {
	f := fs.Lookup(name)
	if f == nil {
		return "--" + name
	}
	v, _ := flag.UnquoteUsage(f)
	if v == "" {
		v = "VALUE"
	}
	return "--" + name + " " + v
}

func dashes(name string) string { return "--" + strings.TrimLeft(name, "-") }

// PrintFlags lists fs's flags as PrintDefaults does, but spelt --flag, the
// way the documentation and the error lines spell them.
func PrintFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		v, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if v != "" {
			line += " " + v
		}
		fmt.Fprintf(w, "%s\n    \t%s", line, strings.ReplaceAll(usage, "\n", "\n    \t"))
		if d := f.DefValue; d != "" && d != "0" && d != "false" && d != "[]" {
			fmt.Fprintf(w, " (default %s)", d)
		}
		fmt.Fprintln(w)
	})
}

// version is the release, set at build time with -ldflags
// "-X github.com/airlockhq/airlock/internal/cli.version=...".
var version = "dev"

// Release is the release alone ("dev" unless the build set it), which
// the MCP server and proxy announce.
func Release() string { return version }

// Version is the version line: the release and the commit the binary
// was built from, which the Go toolchain records when it builds inside a
// git checkout.
func Version() string {
	line := "airlock " + version
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return line
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+dirty"
			}
		}
	}
	if rev == "" {
		rev = "unknown (built outside a git checkout)"
	}
	return line + " commit " + rev + modified + " " + info.GoVersion
}
