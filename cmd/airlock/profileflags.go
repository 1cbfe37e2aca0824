package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/airlockhq/airlock/profile"
)

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// profileFlags are the flags that build a profile, shared by run and doctor.
type profileFlags struct {
	profile    string
	workspace  string
	read       listFlag
	write      listFlag
	deny       listFlag
	sockets    listFlag
	env        listFlag
	net        string
	memory     string
	pids       int
	cpu        float64
	timeout    time.Duration
	maxOutput  string
	maxWrite   string
	readOnlyWS bool
	forceWS    bool

	// beforeWorkspaceFile, when set, is called with the workspace before
	// its .airlock/profile.toml is read; an error stops the build (airlock
	// run: a pending check of an earlier run in that workspace).
	beforeWorkspaceFile func(ws string) error

	// loaded lists the profile files build read, in the order applied.
	loaded []string
}

func (f *profileFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.profile, "profile", "", "preset name ("+strings.Join(profile.PresetNames(), ", ")+") or profile TOML file; default: workspace")
	fs.StringVar(&f.workspace, "workspace", "", "project directory the command may read and write (default: the nearest directory from the current one upwards, below $HOME, with .airlock/ or .git, else the current directory)")
	fs.Var(&f.read, "allow-read", "extra `PATH` the command may read (repeatable)")
	fs.Var(&f.write, "allow-write", "extra `PATH` the command may read and write (repeatable)")
	fs.Var(&f.sockets, "allow-socket", "host unix socket `PATH` the command may connect to (repeatable); no other host socket is reachable")
	fs.Var(&f.deny, "deny", "`GLOB` to hide even inside allowed paths, files that appear later included, e.g. '**/.env' (repeatable)")
	fs.Var(&f.env, "env", "pass `K` from the environment, or set K=V (repeatable)")
	fs.StringVar(&f.net, "net", "", "network: `none` (default); all (every public address, TCP and UDP; private and cloud-metadata addresses refused, add exceptions as all,IP[:PORT][/udp],...); "+
		"or an allowlist HOST[:PORT],... of names, *.suffix wildcards and IP literals ([2001:db8::1]:443), where no port means TCP 80 and 443 only; "+
		"HOST:PORT/udp allows UDP to that port (ntp.example:123/udp), and a UDP entry must name its port")
	fs.StringVar(&f.memory, "memory", "", "memory budget, e.g. 512MiB (no swap)")
	fs.IntVar(&f.pids, "pids", 0, "maximum number of processes at once")
	fs.Float64Var(&f.cpu, "cpu", 0, "CPU budget in cores, e.g. 1.5")
	fs.DurationVar(&f.timeout, "timeout", 0, "wall-clock limit, e.g. 30s (exit status 124 when reached)")
	fs.StringVar(&f.maxOutput, "max-output", "", "cap on stdout+stderr bytes, e.g. 1MiB")
	fs.StringVar(&f.maxWrite, "max-write", "", "cap on the bytes the command may add to the workspace and --allow-write paths, e.g. 1GiB (the run ends with status limit_exceeded past it)")
	fs.BoolVar(&f.readOnlyWS, "read-only", false, "make the workspace read-only")
	fs.BoolVar(&f.forceWS, "force-workspace", false, "accept a workspace that is your home directory or an ancestor of it, a system directory (/etc, /usr, /var, ...) or a shared root (/home, /tmp, ...); the host's /proc, /sys and /dev are refused even so")
}

// build assembles the profile in the documented order (docs/PROFILES.md):
// the preset, the workspace's .airlock/profile.toml, a --profile file,
// then the flags. A --profile file naming a preset puts that preset under
// the workspace's file rather than discarding it. f.loaded lists the
// files read, for doctor and --report.
func (f *profileFlags) build() (*profile.Profile, error) {
	presetName := ""
	var fileSpec *profile.Spec
	f.loaded = nil
	if f.profile != "" {
		if _, err := profile.LookupPreset(f.profile); err == nil {
			presetName = f.profile
		} else if _, statErr := os.Stat(f.profile); statErr == nil {
			s, err := profile.LoadLayer(f.profile)
			if err != nil {
				return nil, err
			}
			fileSpec = &s
		} else {
			return nil, fmt.Errorf("--profile %q: neither a preset (%s) nor a file", f.profile, strings.Join(profile.PresetNames(), ", "))
		}
	}
	ws := f.workspace
	if ws == "" {
		if fileSpec != nil && fileSpec.Workspace != "" {
			ws = fileSpec.Workspace
		} else {
			wd, err := os.Getwd()
			if err != nil {
				return nil, err
			}
			// Run from a subdirectory, the workspace is the enclosing
			// project; the command still starts in wd (run.go).
			ws = profile.FindWorkspace(wd)
		}
	}
	if abs, err := filepath.Abs(ws); err == nil && !strings.HasPrefix(ws, "~") {
		ws = abs
	}
	if f.beforeWorkspaceFile != nil {
		if err := f.beforeWorkspaceFile(ws); err != nil {
			return nil, err
		}
	}
	var layers []profile.Spec
	wsFile := filepath.Join(ws, profile.WorkspaceFile)
	if _, err := os.Stat(wsFile); err == nil {
		s, err := profile.LoadLayer(wsFile)
		if err != nil {
			return nil, err
		}
		layers = append(layers, s)
		f.loaded = append(f.loaded, wsFile)
	}
	if fileSpec != nil {
		layers = append(layers, *fileSpec)
		if abs, err := filepath.Abs(f.profile); err == nil {
			f.loaded = append(f.loaded, abs)
		}
	}
	spec, err := profile.Compose(presetName, layers...)
	if err != nil {
		return nil, err
	}
	spec.Workspace = ws

	over := profile.Spec{}
	over.Filesystem.Read = f.read
	over.Filesystem.Write = f.write
	over.Filesystem.Deny = f.deny
	over.Filesystem.Sockets = f.sockets
	over.ReadOnlyWorkspace = f.readOnlyWS
	over.ForceWorkspace = f.forceWS
	for _, e := range f.env {
		if k, v, ok := strings.Cut(e, "="); ok {
			if over.Env.Set == nil {
				over.Env.Set = map[string]string{}
			}
			over.Env.Set[k] = v
		} else {
			over.Env.Allow = append(over.Env.Allow, e)
		}
	}
	if err := netFlag(f.net, &over); err != nil {
		return nil, err
	}
	if over.Budgets.Memory, err = sizeFlag("--memory", f.memory); err != nil {
		return nil, err
	}
	if over.Budgets.Output, err = sizeFlag("--max-output", f.maxOutput); err != nil {
		return nil, err
	}
	if over.Budgets.MaxWrite, err = sizeFlag("--max-write", f.maxWrite); err != nil {
		return nil, err
	}
	if f.pids < 0 {
		return nil, fmt.Errorf("--pids %d: use a positive number", f.pids)
	}
	if f.cpu < 0 {
		return nil, fmt.Errorf("--cpu %s: use a positive number of cores", strconv.FormatFloat(f.cpu, 'g', -1, 64))
	}
	over.Budgets.Pids = f.pids
	over.Budgets.CPU = f.cpu
	over.Budgets.WallTime = profile.Duration(f.timeout)
	return profile.New(profile.Merge(spec, over))
}

func sizeFlag(name, v string) (profile.Size, error) {
	if v == "" {
		return 0, nil
	}
	s, err := profile.ParseSize(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}
