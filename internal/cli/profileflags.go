package cli

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/workspace"
)

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// ProfileFlags are the flags that override a workspace's profile, shared
// by run, doctor and mcp.
type ProfileFlags struct {
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

	// BeforeWorkspaceFile is workspace.Overrides.BeforeProfileFile.
	BeforeWorkspaceFile func(ws string) error
}

// AsksMemory reports whether --memory was given a value.
func (f *ProfileFlags) AsksMemory() bool { return f.memory != "" }

// Register defines the flags on fs.
func (f *ProfileFlags) Register(fs *flag.FlagSet) {
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

// Overrides turns the flags into the workspace's Overrides: the
// workspace, the --profile preset or file, and the flags' own layer,
// which workspace.Load applies over every profile file.
func (f *ProfileFlags) Overrides() (workspace.Overrides, error) {
	o := workspace.Overrides{Workspace: f.workspace, Profile: f.profile, BeforeProfileFile: f.BeforeWorkspaceFile}
	over := &o.Layer
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
	var err error
	if err = netFlag(f.net, over); err != nil {
		return o, err
	}
	if over.Budgets.Memory, err = sizeFlag("--memory", f.memory); err != nil {
		return o, err
	}
	if over.Budgets.Output, err = sizeFlag("--max-output", f.maxOutput); err != nil {
		return o, err
	}
	if over.Budgets.MaxWrite, err = sizeFlag("--max-write", f.maxWrite); err != nil {
		return o, err
	}
	if f.pids < 0 {
		return o, fmt.Errorf("--pids %d: use a positive number", f.pids)
	}
	if f.cpu < 0 {
		return o, fmt.Errorf("--cpu %s: use a positive number of cores", strconv.FormatFloat(f.cpu, 'g', -1, 64))
	}
	over.Budgets.Pids = f.pids
	over.Budgets.CPU = f.cpu
	over.Budgets.WallTime = profile.Duration(f.timeout)
	return o, nil
}

// Load loads the policy of the workspace the flags name (workspace.Load
// from the current directory).
func (f *ProfileFlags) Load() (*workspace.Policy, error) {
	o, err := f.Overrides()
	if err != nil {
		return nil, err
	}
	return workspace.Load("", o)
}

// Build is Load's profile.
func (f *ProfileFlags) Build() (*profile.Profile, error) {
	pol, err := f.Load()
	if err != nil {
		return nil, err
	}
	return pol.Profile, nil
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

// WorkspacePolicy is what applies in workspace ws with no overrides:
// what "airlock run --workspace WS" loads too, so the fingerprint a
// sandbox grant is bound to is the one the run will have.
func WorkspacePolicy(ws string) (*workspace.Policy, error) {
	return workspace.Load(ws, workspace.Overrides{Workspace: ws})
}
