package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
	"github.com/airlockhq/airlock/workspace"
)

// loadChecked is load after the checks that need to know which flags
// were given: a value that would be silently ignored, or that names
// something missing, is an error before anything runs.
func (f *profileFlags) loadChecked(fs *flag.FlagSet) (*workspace.Policy, error) {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	// 0 would read as "no budget" and give the profile's default, which
	// is not what someone asking for zero meant.
	if set["memory"] {
		if s, err := profile.ParseSize(f.memory); err == nil && s == 0 {
			return nil, fmt.Errorf("--memory %s: use a positive size such as 512MiB, or leave --memory out for the profile's budget", f.memory)
		}
	}
	if set["pids"] && f.pids == 0 {
		return nil, errors.New("--pids 0: use a positive number of processes, or leave --pids out for the profile's budget")
	}
	if set["cpu"] && f.cpu == 0 {
		return nil, errors.New("--cpu 0: use a positive number of cores such as 1.5, or leave --cpu out for no CPU budget")
	}
	if err := budgetUsage(set, f); err != nil {
		return nil, err
	}
	if set["timeout"] && f.timeout <= 0 {
		return nil, fmt.Errorf("--timeout %s: use a positive duration such as 30s, or leave --timeout out for none", f.timeout)
	}
	for _, e := range f.env {
		k, _, _ := strings.Cut(e, "=")
		if reservedEnv[k] {
			return nil, fmt.Errorf("--env %s: the sandbox sets %s itself (%s); pass another variable name", e, k, reservedEnvWhy[k])
		}
	}
	for _, l := range []struct {
		name  string
		paths []string
	}{{"--allow-read", f.read}, {"--allow-write", f.write}} {
		for _, p := range l.paths {
			if strings.HasPrefix(p, "~") {
				continue // profile.New expands and reports it
			}
			if _, err := os.Stat(p); err != nil {
				return nil, fmt.Errorf("%s %s: %v; create it first (mkdir -p %s) or fix the path", l.name, p, errors.Unwrap(err), p)
			}
		}
	}
	return f.load()
}

// reservedEnv are the variables the sandbox sets last (sandbox.buildEnv):
// a --env value for them would be dropped without a word.
var (
	reservedEnv    = map[string]bool{"HOME": true, "TMPDIR": true}
	reservedEnvWhy = map[string]string{
		"HOME":   "an empty private directory at the caller's home path",
		"TMPDIR": "the private /tmp",
	}
)

// netFlag turns --net into the network part of a spec. The keywords are
// exact: "none" alone, "all" alone or first; anything else is an
// allowlist whose entries cannot be keywords (none,example.com would
// otherwise quietly mean "example.com only").
func netFlag(v string, over *profile.Spec) error {
	if v == "" {
		return nil
	}
	entries := strings.Split(v, ",")
	for i, e := range entries {
		switch strings.ToLower(e) {
		case profile.NetworkModeNone, profile.NetworkModeAll:
			if e != strings.ToLower(e) {
				return fmt.Errorf("--net %s: keywords are lower case: use --net %s", v, strings.ToLower(v))
			}
			if e == profile.NetworkModeNone && len(entries) > 1 {
				return fmt.Errorf("--net %s: none cannot be combined with hosts; use --net none, or --net with only the hosts", v)
			}
			if e == profile.NetworkModeAll && i > 0 {
				return fmt.Errorf("--net %s: all comes first, followed by its exceptions: --net all,IP[:PORT]", v)
			}
		case "":
			return fmt.Errorf("--net %s: empty entry; separate hosts with single commas", v)
		}
	}
	switch entries[0] {
	case profile.NetworkModeNone:
		over.Network.Mode = profile.NetworkModeNone
	case profile.NetworkModeAll:
		over.Network.Mode = profile.NetworkModeAll
		over.Network.Allow = entries[1:]
	default:
		over.Network.Mode = profile.NetworkModeAllow
		over.Network.Allow = entries
	}
	return nil
}

// reportFile is where --report writes the Result: a file opened before
// the run, or stdout for "-".
type reportFile struct {
	f   *os.File
	out io.Writer
}

func openReport(path string, stdout io.Writer) (*reportFile, error) {
	switch path {
	case "":
		return nil, nil
	case "-":
		return &reportFile{out: stdout}, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		dir := filepath.Dir(path)
		return nil, fmt.Errorf("--report %s: %v; choose a file in a directory you can write (%s is not), or --report - for stdout", path, errors.Unwrap(err), dir)
	}
	return &reportFile{f: f, out: f}, nil
}

// write puts res in the report with the profile files the run loaded
// (none: the preset and flags alone), so a report says where its
// profile came from.
func (r *reportFile) write(res *sandbox.Result, files []string) error {
	data, err := json.MarshalIndent(struct {
		*sandbox.Result
		ProfileFiles []string `json:"profile_files"`
	}{res, append([]string{}, files...)}, "", "  ")
	if err != nil {
		return err
	}
	if r.f != nil {
		if err := r.f.Truncate(0); err != nil {
			return err
		}
	}
	_, err = r.out.Write(append(data, '\n'))
	return err
}

func (r *reportFile) Close() {
	if r != nil && r.f != nil {
		r.f.Close()
	}
}

// warnAddressSpace says on stderr, before the run, that a memory budget
// asked for (--memory, or one below the floor the sandbox raises it to) is
// held only by RLIMIT_AS on this host; the Report says so for every run.
func warnAddressSpace(w io.Writer, rep sandbox.Report, asked bool) {
	var reason string
	for _, b := range rep.Budgets {
		if b.Budget == sandbox.BudgetMemory && b.Status == sandbox.Degraded {
			reason = b.Reason
		}
	}
	_, note, ok := strings.Cut(reason, "the memory budget ")
	if !ok || (!asked && !strings.Contains(note, "raised to")) {
		return
	}
	note, _, _ = strings.Cut(note, "; ")
	fmt.Fprintf(w, "airlock: warning: the memory budget %s (no writable cgroup here; run as root or in a delegated cgroup for a real memory limit)\n", note)
}
