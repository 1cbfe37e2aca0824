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
	sandboxtest.RerunAsNobody(t, "^TestAttack")
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
