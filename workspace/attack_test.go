package workspace_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/sandbox"
	"github.com/airlockhq/airlock/workspace"
)

// The attack tests run a workspace's deny rules compiled into the sandbox
// (workspace.KernelRules merged onto the workspace preset) against
// programs the gate cannot see into: an interpreter, dd, find -exec,
// xargs. Each judges by host-side evidence and has two positive controls:
// the probe run on the host, and in a sandbox of the same workspace
// without the rules, where it must reach the file, path or listener.

// TestAttacksUnprivileged re-runs the TestAttack* tests of this package
// as uid 65534.
func TestAttacksUnprivileged(t *testing.T) {
	if sandboxtest.Unprivileged() {
		t.Skip("already unprivileged")
	}
	var env []string
	if _, err := os.Stat("/dev/net/tun"); err == nil {
		env = append(env, newNetTarget(t).env())
	}
	sandboxtest.RerunAsNobody(t, "^TestAttack", env...)
}

// withRules returns a spec edit that merges the kernel overlay of the
// deny rules (rule file syntax, workspace layer) onto the spec.
func withRules(t *testing.T, ws string, matches ...string) func(*profile.Spec) {
	t.Helper()
	base := rules.Base{Root: ws, Cwd: ws, Home: os.Getenv("HOME")}
	var rs []*rules.Rule
	for _, m := range matches {
		r, err := rules.NewRule(rules.Deny, m, rules.Workspace, base)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	overlay, report := workspace.KernelRules(rules.NewSet(rs), ws)
	for _, e := range report {
		t.Logf("%s: kernel %v, %s %s", e.Rule, e.Kernel, e.Mechanism, e.Note)
	}
	return func(s *profile.Spec) { *s = profile.Merge(*s, overlay) }
}

func requireControl(t *testing.T, o sandboxtest.Outcome, want string) {
	t.Helper()
	if o.ExitCode != 0 || !strings.Contains(o.Output(), want) {
		t.Fatalf("positive control failed (want %q in the output of a successful run): the probe proves nothing\n%s", want, o)
	}
}

func requireNotIn(t *testing.T, o sandboxtest.Outcome, evidence string) {
	t.Helper()
	if strings.Contains(o.Output(), evidence) {
		t.Errorf("ATTACK SUCCEEDED: %q appears in the sandboxed run's output\n%s", evidence, o)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// deny Read(./.env): Python's open() and dd read the file directly, with
// no "cat .env" for the gate to see.
func TestAttackRuleRead(t *testing.T) {
	sandboxtest.PlantSecrets(t)
	secret := sandboxtest.Marker(t, "env-secret")
	probes := map[string]sandboxtest.Probe{
		"python": {Args: sandboxtest.Py(`print(open(".env").read())`)},
		"dd":     {Args: sandboxtest.Sh(`dd if=.env status=none`)},
	}
	for name, p := range probes {
		t.Run(name, func(t *testing.T) {
			ws := sandboxtest.Workspace(t)
			must(t, os.WriteFile(filepath.Join(ws, ".env"), []byte(secret+"\n"), 0o644))
			requireControl(t, sandboxtest.New(t, "workspace", ws, nil).Host(t, p), secret)
			requireControl(t, sandboxtest.New(t, "workspace", ws, nil).Run(t, p), secret)

			o := sandboxtest.New(t, "workspace", ws, withRules(t, ws, "Read(./.env)")).Run(t, p)
			requireNotIn(t, o, secret)
			if o.ExitCode == 0 {
				t.Errorf("the read of a denied file succeeded\n%s", o)
			}
		})
	}
}

// deny Read(.env) is about that name at any depth, including a file the
// host writes after the run started (the deny watch, as root; as uid
// 65534 the Report says deny entries cover only files present at start).
func TestAttackRuleReadAppearsLater(t *testing.T) {
	sandboxtest.PlantSecrets(t)
	secret := sandboxtest.Marker(t, "late-secret")
	p := sandboxtest.Probe{Args: sandboxtest.Sh(`i=0
while [ ! -e go ]; do i=$((i+1)); [ $i -gt 2000 ] && exit 3; sleep 0.01; done
python3 -c 'print(open("sub/.env").read())'`)}
	run := func(t *testing.T, sb *sandboxtest.Sandbox) sandboxtest.Outcome {
		r := sb.Start(t, p)
		must(t, os.MkdirAll(filepath.Join(sb.Workspace, "sub"), 0o755))
		must(t, os.WriteFile(filepath.Join(sb.Workspace, "sub", ".env"), []byte(secret+"\n"), 0o644))
		must(t, os.WriteFile(filepath.Join(sb.Workspace, "go"), nil, 0o644))
		return r.Wait()
	}
	requireControl(t, run(t, sandboxtest.New(t, "workspace", sandboxtest.Workspace(t), nil)), secret)

	ws := sandboxtest.Workspace(t)
	sb := sandboxtest.New(t, "workspace", ws, withRules(t, ws, "Read(.env)"))
	o := run(t, sb)
	line := sb.Executor.Report().Status(profile.DenyNewFiles)
	if line.Status == sandbox.Unavailable || strings.Contains(line.Reason, "only files present at start") {
		if !strings.Contains(o.Output(), secret) {
			t.Errorf("the Report says deny-new-files is %s (%s), yet the late file was refused; update the Report\n%s", line.Status, line.Reason, o)
		}
		t.Logf("as the Report says (%s: %s), a file that appears later is readable here", line.Status, line.Reason)
		return
	}
	requireNotIn(t, o, secret)
}

// deny Edit(./.github/workflows/**): a Python one-liner rewrites the
// workflow, another makes a new one, a third renames a file onto it; the
// evidence is the host's files.
func TestAttackRuleEdit(t *testing.T) {
	sandboxtest.PlantSecrets(t)
	mark := sandboxtest.Marker(t, "workflow")
	probes := []struct {
		name string
		args []string
		file string // the host file that must keep its state
	}{
		{"rewrite", sandboxtest.Py(`open(".github/workflows/x.yml", "w").write("run: " + __import__("sys").argv[1])`, mark), "x.yml"},
		{"create", sandboxtest.Py(`open(".github/workflows/new.yml", "w").write(__import__("sys").argv[1])`, mark), "new.yml"},
		{"rename-onto", sandboxtest.Py(`import os, sys
open("tmp.yml", "w").write(sys.argv[1])
os.replace("tmp.yml", ".github/workflows/x.yml")`, mark), "x.yml"},
		{"shell-create", sandboxtest.Sh(`echo "$1" > .github/workflows/sh.yml`, mark), "sh.yml"},
	}
	setup := func(t *testing.T) string {
		ws := sandboxtest.Workspace(t)
		must(t, os.MkdirAll(filepath.Join(ws, ".github", "workflows"), 0o755))
		must(t, os.WriteFile(filepath.Join(ws, ".github", "workflows", "x.yml"), []byte("run: ok\n"), 0o644))
		return ws
	}
	for _, pr := range probes {
		t.Run(pr.name, func(t *testing.T) {
			p := sandboxtest.Probe{Args: pr.args}
			ws := setup(t)
			file := filepath.Join(ws, ".github", "workflows", pr.file)
			before := sandboxtest.FileState(file)
			o := sandboxtest.New(t, "workspace", ws, nil).Run(t, p)
			if o.ExitCode != 0 || sandboxtest.FileState(file) == before {
				t.Fatalf("positive control failed: without the rule the sandboxed probe did not change %s\n%s", file, o)
			}

			ws = setup(t)
			file = filepath.Join(ws, ".github", "workflows", pr.file)
			before = sandboxtest.FileState(file)
			o = sandboxtest.New(t, "workspace", ws, withRules(t, ws, "Edit(./.github/workflows/**)")).Run(t, p)
			if got := sandboxtest.FileState(file); got != before {
				t.Errorf("ATTACK SUCCEEDED: %s changed (%s → %s)\n%s", file, before, got, o)
			}
			if o.ExitCode == 0 {
				t.Errorf("the write was not refused\n%s", o)
			}
		})
	}
}

// deny Edit(./.github/workflows/**) where the directory does not exist
// yet: making it and a workflow in it is refused (a read-only placeholder
// for .github when that is absent too; the create guard beneath an
// existing .github).
func TestAttackRuleEditAbsent(t *testing.T) {
	sandboxtest.PlantSecrets(t)
	mark := sandboxtest.Marker(t, "workflow")
	p := sandboxtest.Probe{Args: sandboxtest.Py(`import os, sys
os.makedirs(".github/workflows", exist_ok=True)
open(".github/workflows/new.yml", "w").write(sys.argv[1])`, mark)}
	for _, github := range []bool{false, true} {
		name := map[bool]string{false: "no-github", true: "github"}[github]
		t.Run(name, func(t *testing.T) {
			setup := func() string {
				ws := sandboxtest.Workspace(t)
				if github {
					must(t, os.Mkdir(filepath.Join(ws, ".github"), 0o755))
				}
				return ws
			}
			ws := setup()
			requireControl(t, sandboxtest.New(t, "workspace", ws, nil).Host(t, p), "")
			ws = setup()
			if o := sandboxtest.New(t, "workspace", ws, nil).Run(t, p); o.ExitCode != 0 || !sandboxtest.Exists(filepath.Join(ws, ".github/workflows/new.yml")) {
				t.Fatalf("positive control failed: without the rule the sandbox did not make the workflow\n%s", o)
			}
			ws = setup()
			sb := sandboxtest.New(t, "workspace", ws, withRules(t, ws, "Edit(./.github/workflows/**)"))
			o := sb.Run(t, p)
			if sandboxtest.Exists(filepath.Join(ws, ".github/workflows/new.yml")) {
				t.Errorf("ATTACK SUCCEEDED: .github/workflows/new.yml is on the host after the run\n%s", o)
			}
			if o.ExitCode == 0 && !sb.Degraded(profile.ProtectedPaths) {
				t.Errorf("the Report says protected-paths is enforced, yet the run made the workflow without an error\n%s", o)
			}
		})
	}
}

// deny Edit(.env) is about .env at any depth: an existing one stays
// read-only, and one made during the run does not stay at its name.
func TestAttackRuleEditAnyDepth(t *testing.T) {
	sandboxtest.PlantSecrets(t)
	mark := sandboxtest.Marker(t, "env")
	p := sandboxtest.Probe{Args: sandboxtest.Sh(`echo "$1" > sub/.env; mkdir -p other && echo "$1" > other/.env
mkdir -p moved && echo "$1" > moved/tmp && mv moved/tmp moved/.env; echo done`, mark)}
	setup := func() string {
		ws := sandboxtest.Workspace(t)
		must(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o755))
		must(t, os.WriteFile(filepath.Join(ws, "sub", ".env"), []byte("KEY=1\n"), 0o644))
		return ws
	}
	ws := setup()
	if o := sandboxtest.New(t, "workspace", ws, nil).Run(t, p); sandboxtest.FileState(filepath.Join(ws, "sub/.env")) == sandboxtest.FileState(filepath.Join(setup(), "sub/.env")) ||
		!sandboxtest.Exists(filepath.Join(ws, "other/.env")) || !sandboxtest.Exists(filepath.Join(ws, "moved/.env")) {
		t.Fatalf("positive control failed: without the rule the sandbox did not write both files\n%s", o)
	}
	ws = setup()
	before := sandboxtest.FileState(filepath.Join(ws, "sub/.env"))
	sb := sandboxtest.New(t, "workspace", ws, withRules(t, ws, "Edit(.env)"))
	o := sb.Run(t, p)
	if got := sandboxtest.FileState(filepath.Join(ws, "sub/.env")); got != before {
		t.Errorf("ATTACK SUCCEEDED: sub/.env changed\n%s", o)
	}
	if sandboxtest.Exists(filepath.Join(ws, "other/.env")) {
		t.Errorf("ATTACK SUCCEEDED: other/.env, made during the run, is still at its name\n%s", o)
	}
	// With the create guard the new file is refused when it is made (the
	// command sees the error), not only moved aside at the end.
	if sandboxtest.Exists(filepath.Join(ws, "moved/.env")) {
		t.Errorf("ATTACK SUCCEEDED: moved/.env, renamed into place during the run, is still at its name\n%s", o)
	}
	if !sb.Degraded(profile.ProtectedPaths) && (!strings.Contains(o.Output(), "cannot create other/.env") || !strings.Contains(o.Output(), "cannot move")) {
		t.Errorf("the Report says protected-paths is enforced, yet making other/.env or moving a file onto moved/.env was not refused\n%s", o)
	}
}

// The sandbox's Report lists every deny rule with how it is enforced,
// and two rule sets that compile alike but for one rule are different
// profiles.
func TestReportListsRules(t *testing.T) {
	sandboxtest.PlantSecrets(t)
	ws := sandboxtest.Workspace(t)
	sb := sandboxtest.New(t, "workspace", ws, withRules(t, ws, "Read(./.env)", "Bash(git push:*)", "Edit(./ci/**)"))
	r := sb.Executor.Report()
	if len(r.Rules) != 3 {
		t.Fatalf("Report.Rules %+v, want three", r.Rules)
	}
	text := r.String()
	for _, want := range []string{"deny rules:", "kernel deny Read(./.env)", "gate   deny Bash(git push:*)", "kernel deny Edit(./ci/**)", "filesystem.protected ci"} {
		if !strings.Contains(text, want) {
			t.Errorf("the Report does not say %q:\n%s", want, text)
		}
	}
	other := sandboxtest.New(t, "workspace", ws, withRules(t, ws, "Read(./.env)", "Bash(git pull:*)", "Edit(./ci/**)"))
	if sb.Executor.Profile().Fingerprint() == other.Executor.Profile().Fingerprint() {
		t.Error("a different gate-only rule leaves the fingerprint unchanged")
	}
}
