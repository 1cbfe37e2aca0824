package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/rules"
)

// Overrides are what the caller adds to the files of a workspace: the
// CLI's flags, a test's fixtures. The zero value adds nothing: the
// workspace is found from the directory, the profile starts from the
// default preset, and the rules come from their default locations.
type Overrides struct {
	// Workspace is the workspace directory; empty means the workspace a
	// --profile file names, else profile.FindWorkspace of the directory.
	Workspace string
	// Profile is a preset name or a profile TOML file; empty means the
	// preset the workspace's own file names, else profile.DefaultPreset.
	Profile string
	// Layer is applied last, over every profile file (the CLI's flags);
	// its zero value changes nothing (profile.Merge).
	Layer profile.Spec
	// Budgets, when set, replace the profile's budgets whole, zero
	// fields meaning no budget (a provider's configuration), before
	// Layer's are merged.
	Budgets *profile.Budgets
	// Scratch marks a workspace the caller made for one job (the local
	// provider's): its own files (.airlock/, .claude/) are not read, as
	// what ran there before may have written them; the profile and the
	// managed and user rule layers still apply.
	Scratch bool
	// LongLived marks a profile for a process that serves many calls
	// (mcp proxy's downstream server): the output and wall-time budgets
	// apply only when Layer sets them.
	LongLived bool

	// Managed is the managed layer's rule file; empty means
	// rules.DefaultManagedPath, "-" none.
	Managed string
	// User is the user layer's rule file; empty means
	// ~/.config/airlock/policy.toml, "-" none.
	User string
	// Home is what "~" stands for in rules; empty means $HOME.
	Home string
	// NoClaude skips Claude Code's .claude/settings*.json.
	NoClaude bool

	// BeforeProfileFile, when set, is called with the workspace before
	// its .airlock/profile.toml is read; an error stops Load (airlock
	// run: a pending check of an earlier run in that workspace).
	BeforeProfileFile func(workspace string) error
}

// Policy is everything that applies in one workspace. It is immutable.
type Policy struct {
	// Workspace is the absolute workspace directory.
	Workspace string
	// Profile is what the sandbox enforces and what the gate's step 1
	// reads, the workspace's deny rules compiled in; a grant is bound to
	// its fingerprint.
	Profile *profile.Profile
	// ProfileFiles are the profile files read, in the order applied
	// (none: the preset and the overrides alone).
	ProfileFiles []string
	// Rules are the rules of every layer.
	Rules *rules.Set
	// RuleFiles are the rule files that exist, strongest layer first.
	RuleFiles []rules.File
	// Sandbox is true when an airlock rule file sets "sandbox = true":
	// every Bash call of the Claude Code hook then runs in the sandbox.
	// Any layer can turn it on and none can turn off what another did.
	Sandbox bool
	// SandboxFile is the file that turned Sandbox on.
	SandboxFile string

	// kernel is what the sandbox enforces of the rules (compile.go).
	kernel compiled
}

// sources says where the rule files of workspace ws are.
func (o Overrides) sources(ws string) rules.Sources {
	if o.Scratch {
		ws = ""
	}
	return rules.Sources{Workspace: ws, Home: o.Home, Managed: o.Managed, User: o.User, NoClaude: o.NoClaude}
}

// Load loads the policy that applies in dir with the caller's overrides.
// The profile is built in the documented order (docs/PROFILES.md): the
// preset, the workspace's .airlock/profile.toml, a --profile file, then
// o.Layer; a --profile file naming a preset puts that preset under the
// workspace's file rather than discarding it. The rules are read from
// every layer (docs/RULES.md); a file that cannot be read or parsed is an
// error, never a weaker policy. The workspace's deny rules are compiled
// into the profile, so the sandbox enforces them whatever program runs.
func Load(dir string, o Overrides) (*Policy, error) {
	presetName := ""
	var fileSpec *profile.Spec
	pol := &Policy{}
	if o.Profile != "" {
		if _, err := profile.LookupPreset(o.Profile); err == nil {
			presetName = o.Profile
		} else if _, statErr := os.Stat(o.Profile); statErr == nil {
			s, err := profile.LoadLayer(o.Profile)
			if err != nil {
				return nil, err
			}
			fileSpec = &s
		} else {
			return nil, fmt.Errorf("--profile %q: neither a preset (%s) nor a file", o.Profile, strings.Join(profile.PresetNames(), ", "))
		}
	}
	ws := o.Workspace
	if ws == "" {
		if fileSpec != nil && fileSpec.Workspace != "" {
			ws = fileSpec.Workspace
		} else {
			if dir == "" {
				wd, err := os.Getwd()
				if err != nil {
					return nil, err
				}
				dir = wd
			}
			// From a subdirectory, the workspace is the enclosing
			// project; the command still starts in dir.
			ws = profile.FindWorkspace(dir)
		}
	}
	if abs, err := filepath.Abs(ws); err == nil && !strings.HasPrefix(ws, "~") {
		ws = abs
	}
	if o.BeforeProfileFile != nil {
		if err := o.BeforeProfileFile(ws); err != nil {
			return nil, err
		}
	}
	var layers []profile.Spec
	wsFile := filepath.Join(ws, profile.WorkspaceFile)
	if _, err := os.Stat(wsFile); err == nil && !o.Scratch {
		s, err := profile.LoadLayer(wsFile)
		if err != nil {
			return nil, err
		}
		layers = append(layers, s)
		pol.ProfileFiles = append(pol.ProfileFiles, wsFile)
	}
	if fileSpec != nil {
		layers = append(layers, *fileSpec)
		if abs, err := filepath.Abs(o.Profile); err == nil {
			pol.ProfileFiles = append(pol.ProfileFiles, abs)
		}
	}
	spec, err := profile.Compose(presetName, layers...)
	if err != nil {
		return nil, err
	}
	spec.Workspace = ws
	if o.Budgets != nil {
		spec.Budgets = *o.Budgets
	}
	spec = profile.Merge(spec, o.Layer)
	if o.LongLived {
		if o.Layer.Budgets.Output == 0 {
			spec.Budgets.Output = 0
		}
		if o.Layer.Budgets.WallTime == 0 {
			spec.Budgets.WallTime = 0
		}
	}

	src := o.sources(ws)
	// One read of each rule file gives the rules, the files that exist
	// and the sandbox switch.
	var found []rules.FileData
	if pol.Rules, found, err = rules.LoadFiles(src); err != nil {
		return nil, err
	}
	for _, f := range found {
		pol.RuleFiles = append(pol.RuleFiles, f.File)
	}
	if pol.SandboxFile, err = sandboxSwitch(found); err != nil {
		return nil, err
	}
	pol.Sandbox = pol.SandboxFile != ""

	// The profile's workspace is settled (symlinks resolved) only by
	// profile.New, and the rules are compiled against it.
	base, err := profile.New(spec)
	if err != nil {
		return nil, err
	}
	pol.Workspace = base.Workspace()
	overlay, kernel := compileRules(pol.Rules, pol.Workspace)
	pol.kernel, pol.Profile = kernel, base
	if !reflect.DeepEqual(overlay, profile.Spec{}) {
		if pol.Profile, err = profile.New(profile.Merge(base.Spec(), overlay)); err != nil {
			return nil, fmt.Errorf("the workspace's deny rules compiled into its profile: %w", err)
		}
	}
	return pol, nil
}

// sandboxSwitch returns the first airlock rule file of found that sets
// "sandbox = true", or "".
func sandboxSwitch(found []rules.FileData) (string, error) {
	for _, f := range found {
		if f.Claude {
			continue
		}
		var v struct {
			Sandbox bool `toml:"sandbox"`
		}
		if _, err := toml.Decode(string(f.Data), &v); err != nil {
			return "", fmt.Errorf("%s: %w", f.Path, err)
		}
		if v.Sandbox {
			return f.Path, nil
		}
	}
	return "", nil
}
