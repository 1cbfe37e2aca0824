package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/rules"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fixture is a workspace with a profile file, a workspace rule file and a
// user rule file, and no managed layer.
type fixture struct {
	ws, home, user string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	f := fixture{ws: filepath.Join(root, "ws"), home: filepath.Join(root, "home"), user: filepath.Join(root, "home", "user.toml")}
	writeFile(t, filepath.Join(f.ws, profile.WorkspaceFile), "[budgets]\nmemory = \"2GiB\"\n[network]\nmode = \"allow\"\nallow = [\"a.example\"]\n")
	writeFile(t, filepath.Join(f.ws, ".airlock", "policy.toml"), "[[rule]]\neffect = \"allow\"\nmatch = \"Bash(make)\"\n")
	writeFile(t, f.user, "[[rule]]\neffect = \"deny\"\nmatch = \"Bash(git push:*)\"\n")
	return f
}

func (f fixture) overrides() Overrides {
	return Overrides{Workspace: f.ws, Managed: "-", User: f.user, Home: f.home}
}

func TestLoadLayers(t *testing.T) {
	f := newFixture(t)
	other := filepath.Join(f.home, "strict.toml")
	writeFile(t, other, "preset = \"strict\"\n[network]\nmode = \"allow\"\nallow = [\"b.example\"]\n")
	on := true
	tests := []struct {
		name  string
		edit  func(*Overrides)
		check func(t *testing.T, p *Policy)
	}{
		{"files and rules", func(*Overrides) {}, func(t *testing.T, p *Policy) {
			s := p.Profile.Spec()
			if p.Workspace != f.ws || s.Preset != profile.DefaultPreset || s.Budgets.Memory != 2<<30 {
				t.Errorf("workspace %s preset %s memory %v", p.Workspace, s.Preset, s.Budgets.Memory)
			}
			if want := []string{filepath.Join(f.ws, profile.WorkspaceFile)}; !slices.Equal(p.ProfileFiles, want) {
				t.Errorf("profile files %v, want %v", p.ProfileFiles, want)
			}
			var layers []rules.Layer
			for _, r := range p.Rules.Rules() {
				layers = append(layers, r.Layer)
			}
			if !slices.Equal(layers, []rules.Layer{rules.User, rules.Workspace}) {
				t.Errorf("rule layers %v, want user then workspace", layers)
			}
			if len(p.RuleFiles) != 2 || p.RuleFiles[0].Path != f.user {
				t.Errorf("rule files %+v: want the two that exist, user first", p.RuleFiles)
			}
			if p.Sandbox {
				t.Error("sandbox on without a file saying so")
			}
		}},
		{"a --profile file over the workspace's, then the layer", func(o *Overrides) {
			o.Profile = other
			o.Layer.Network.Allow = []string{"c.example"}
			o.Layer.AutoAllowInSandbox = &on
		}, func(t *testing.T, p *Policy) {
			s := p.Profile.Spec()
			if s.Preset != "strict" || s.Budgets.Memory != 2<<30 {
				t.Errorf("preset %s memory %v: want strict under the workspace file's 2GiB", s.Preset, s.Budgets.Memory)
			}
			if !slices.Equal(s.Network.Allow, []string{"a.example", "b.example", "c.example"}) {
				t.Errorf("allow %v: want every layer's entries in order", s.Network.Allow)
			}
			if len(p.ProfileFiles) != 2 || p.ProfileFiles[1] != other {
				t.Errorf("profile files %v", p.ProfileFiles)
			}
			if on, set := p.Profile.AutoAllowInSandbox(); !on || !set {
				t.Errorf("auto_allow_in_sandbox %v %v, want the layer's true", on, set)
			}
		}},
		{"a scratch workspace's own files are not read", func(o *Overrides) { o.Scratch = true }, func(t *testing.T, p *Policy) {
			if len(p.ProfileFiles) != 0 || p.Profile.Spec().Budgets.Memory == 2<<30 {
				t.Errorf("profile files %v: a scratch workspace's profile file was read", p.ProfileFiles)
			}
			if p.Rules.Len() != 1 || len(p.RuleFiles) != 1 {
				t.Errorf("%d rules from %+v: want the user layer's only", p.Rules.Len(), p.RuleFiles)
			}
		}},
		{"a long-lived server has no output or wall-time budget unless asked", func(o *Overrides) {
			o.LongLived = true
			o.Layer.Budgets.WallTime = profile.Duration(time.Minute)
		}, func(t *testing.T, p *Policy) {
			b := p.Profile.Spec().Budgets
			if b.Output != 0 || b.WallTime != profile.Duration(time.Minute) {
				t.Errorf("output %v wall %v", b.Output, b.WallTime)
			}
		}},
		{"budgets replaced whole", func(o *Overrides) { o.Budgets = &profile.Budgets{Pids: 7} }, func(t *testing.T, p *Policy) {
			if b := p.Profile.Spec().Budgets; b.Pids != 7 || b.Memory != 0 {
				t.Errorf("budgets %+v: want only pids 7", b)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := f.overrides()
			tt.edit(&o)
			p, err := Load(f.ws, o)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, p)
		})
	}
}

// The workspace is found from the directory when no override names it.
func TestLoadFindsWorkspace(t *testing.T) {
	f := newFixture(t)
	sub := filepath.Join(f.ws, "src", "deep")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	o := f.overrides()
	o.Workspace = ""
	p, err := Load(sub, o)
	if err != nil {
		t.Fatal(err)
	}
	if p.Workspace != f.ws {
		t.Errorf("workspace %s, want %s", p.Workspace, f.ws)
	}
}

// Any airlock rule layer can turn the hook's sandbox on; Claude Code's
// settings cannot; a broken file is an error, not "off".
func TestLoadSandboxSwitch(t *testing.T) {
	f := newFixture(t)
	p, err := Load(f.ws, f.overrides())
	if err != nil || p.Sandbox {
		t.Fatalf("before: %v sandbox=%v", err, p != nil && p.Sandbox)
	}
	writeFile(t, f.user, "sandbox = true\n")
	if p, err = Load(f.ws, f.overrides()); err != nil || !p.Sandbox || p.SandboxFile != f.user {
		t.Fatalf("user layer sandbox = true: %v %+v", err, p)
	}
	writeFile(t, f.user, "sandbox = \"yes\"\n")
	if _, err := Load(f.ws, f.overrides()); err == nil {
		t.Error("a sandbox key of the wrong type loaded")
	}
}

// A broken rule or profile file fails Load: a broken policy must not
// become a weaker one.
func TestLoadBrokenFiles(t *testing.T) {
	for _, file := range []string{".airlock/policy.toml", profile.WorkspaceFile} {
		t.Run(file, func(t *testing.T) {
			f := newFixture(t)
			writeFile(t, filepath.Join(f.ws, file), "[[rule\n")
			if _, err := Load(f.ws, f.overrides()); err == nil {
				t.Error("loaded")
			}
		})
	}
}

// BeforeProfileFile runs before the workspace's profile file is read and
// can stop Load.
func TestLoadBeforeProfileFile(t *testing.T) {
	f := newFixture(t)
	o := f.overrides()
	var saw string
	o.BeforeProfileFile = func(ws string) error { saw = ws; return os.ErrPermission }
	if _, err := Load(f.ws, o); err == nil || saw != f.ws {
		t.Errorf("err %v, saw %q", err, saw)
	}
}

// The stamp changes with any file Load reads.
func TestStamp(t *testing.T) {
	f := newFixture(t)
	before := Stamp(f.ws, f.overrides())
	if Stamp(f.ws, f.overrides()) != before {
		t.Fatal("the stamp changed with nothing changed")
	}
	writeFile(t, rules.LocalPath(f.ws), "[[rule]]\neffect = \"allow\"\nmatch = \"Bash(ls)\"\n")
	if Stamp(f.ws, f.overrides()) == before {
		t.Error("a new local rule file left the stamp as it was")
	}
}

// Evaluator with tools confines their calls; without, it confines none.
func TestEvaluatorConfinement(t *testing.T) {
	f := newFixture(t)
	p, err := Load(f.ws, f.overrides())
	if err != nil {
		t.Fatal(err)
	}
	if ev := p.Evaluator(); ev.Sandbox != nil || ev.Profile == nil || ev.Rules != p.Rules {
		t.Errorf("plain evaluator: %+v", ev)
	}
	if ev := p.Evaluator("Bash"); ev.Sandbox == nil || !slices.Equal(ev.Sandbox.Tools, []string{"Bash"}) {
		t.Errorf("confined evaluator: %+v", ev.Sandbox)
	}
	if ev := (&Policy{}).Evaluator(); ev.Profile != nil {
		t.Error("a policy without a profile gave the evaluator a nil *Profile in a non-nil interface")
	}
}
