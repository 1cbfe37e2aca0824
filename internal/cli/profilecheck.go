package cli

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/workspace"
)

// LoadChecked is Load after the checks that need to know which flags
// were given: a value that would be silently ignored, or that names
// something missing, is an error before anything runs.
func (f *ProfileFlags) LoadChecked(fs *flag.FlagSet) (*workspace.Policy, error) {
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
	return f.Load()
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
