package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// Reading files that appear at denied paths after the run started: the
// host (the user, another tool) writes workspace/.env, keys/id.pem and a
// file under a denied directory that did not exist at start, while the
// sandboxed command waits for them. Masks cannot hide what did not exist
// when the view was built; the supervisor's fanotify watch refuses the
// opens. The evidence is the secret, which must not appear in the
// sandbox's output, and the Result's denials.
//
// The control runs the probe on the host; a second control runs it in a
// sandbox whose profile does not deny those names, where the late files
// must be readable (so the refusal comes from the deny entries, and the
// wait-for-the-marker protocol works inside the sandbox).
//
// Unprivileged, the supervisor cannot answer permission events, and the
// Report says deny-new-files is degraded to files present at start; the
// test then expects exactly that: the late files are readable.
func TestAttackDenyAppearsAfterStart(t *testing.T) {
	sandboxtest.PlantSecrets(t)
	secret := sandboxtest.Marker(t, "late-secret")
	// .vscode exists at start: a protected path, so a mount of its own
	// inside the workspace, which must be watched too.
	late := []string{".env", "keys/id.pem", "secrets/key", ".vscode/.env"}
	deny := func(s *profile.Spec) { s.Filesystem.Deny = append(s.Filesystem.Deny, "**/.env", "**/*.pem", "secrets") }
	p := sandboxtest.Probe{Args: sandboxtest.Sh(waitForGo+`
for f; do
	if cat "$f"; then echo "READ $f"; else echo "REFUSED $f"; fi
done`, late...)}

	t.Run("control/host", func(t *testing.T) {
		sb := sandboxtest.New(t, preset, sandboxtest.Workspace(t), deny)
		plantLate(t, sb.Workspace, secret, late...)
		requireControl(t, sb.Host(t, p), secret)
	})
	t.Run("control/not-denied", func(t *testing.T) {
		sb := sandboxtest.New(t, preset, sandboxtest.Workspace(t), nil)
		must(t, os.Mkdir(filepath.Join(sb.Workspace, ".vscode"), 0o755))
		o := runThenPlant(t, sb, p, secret, late...)
		for _, f := range late {
			if !strings.Contains(o.Stdout, "READ "+f) {
				t.Fatalf("positive control failed: %s, not denied by this profile, was not readable after it appeared\n%s", f, o)
			}
		}
	})

	sb := sandboxtest.New(t, preset, sandboxtest.Workspace(t), deny)
	must(t, os.Mkdir(filepath.Join(sb.Workspace, ".vscode"), 0o755))
	line := sb.Executor.Report().Status(profile.DenyNewFiles)
	o := runThenPlant(t, sb, p, secret, late...)
	if sandboxtest.Unprivileged() {
		if line.Status != sandbox.Degraded || !strings.Contains(line.Reason, "only files present at start") {
			t.Fatalf("unprivileged, the Report should say deny entries cover only files present at start; it says %+v", line)
		}
		for _, f := range late {
			if !strings.Contains(o.Stdout, "READ "+f) {
				t.Errorf("the Report says %s is not covered unprivileged, yet it was refused; update the Report\n%s", f, o)
			}
		}
		t.Logf("as the Report says (%s: %s), files that appear after the start are readable unprivileged", line.Status, line.Reason)
		return
	}
	if line.Status == sandbox.Unavailable || line.Status == sandbox.NotApplied || line.Mechanism == "" {
		t.Fatalf("as root, deny-new-files should be watched; the Report says %+v", line)
	}
	requireNotIn(t, o, secret)
	for _, f := range late {
		if !strings.Contains(o.Stdout, "REFUSED "+f) {
			t.Errorf("ATTACK SUCCEEDED: %s was not refused\n%s", f, o)
		}
		requireDenial(t, o, filepath.Join(sb.Workspace, f))
	}
	if !strings.Contains(o.Stderr, "Operation not permitted") {
		t.Errorf("the refusal should be EPERM (fanotify's FAN_DENY)\n%s", o)
	}
}

// A file the command itself creates at a denied path: O_CREAT makes the
// name before the open is checked, so the file exists, but the open that
// would write it is refused. It stays empty, and every later open to read
// it is refused too. The evidence is the host's file, which must not hold
// what the command wrote.
func TestAttackDenyCreatedBySandbox(t *testing.T) {
	sandboxtest.PlantSecrets(t)
	sb := sandboxtest.New(t, preset, sandboxtest.Workspace(t), func(s *profile.Spec) {
		s.Filesystem.Deny = append(s.Filesystem.Deny, "secrets")
	})
	if sandboxtest.Unprivileged() {
		t.Skip("unprivileged, deny entries cover only files present at start (TestAttackDenyAppearsAfterStart checks the Report says so)")
	}
	mine := sandboxtest.Marker(t, "mine")
	p := sandboxtest.Probe{Args: sandboxtest.Sh(`mkdir -p secrets; echo "$1" > secrets/own; cat secrets/own && echo READ-BACK`, mine)}
	c := sb.Host(t, p)
	requireControl(t, c, "READ-BACK")
	must(t, os.RemoveAll(filepath.Join(sb.Workspace, "secrets")))

	o := sb.Run(t, p)
	requireNotIn(t, o, "READ-BACK")
	if b, err := os.ReadFile(filepath.Join(sb.Workspace, "secrets/own")); err == nil && strings.Contains(string(b), mine) {
		t.Errorf("the sandbox wrote %s under the denied path (host file holds %q)\n%s", mine, b, o)
	}
	requireDenial(t, o, filepath.Join(sb.Workspace, "secrets/own"))
}

// Moving a late file out of its denied name before opening it. The
// watch decides by the path being opened, and rename and link open
// nothing, so in a writable directory this works: the Report says
// deny-new-files is degraded there. With a read-only workspace the
// command can neither rename nor link, and the Report says enforced.
func TestAttackDenyRenamedAway(t *testing.T) {
	sandboxtest.PlantSecrets(t)
	if sandboxtest.Unprivileged() {
		t.Skip("unprivileged, deny entries cover only files present at start (TestAttackDenyAppearsAfterStart checks the Report says so)")
	}
	secret := sandboxtest.Marker(t, "late-secret")
	p := sandboxtest.Probe{Args: sandboxtest.Sh(waitForGo + `
mv .env moved; ln keys/id.pem linked
cat moved linked .env keys/id.pem`)}
	deny := func(ro bool) func(*profile.Spec) {
		return func(s *profile.Spec) {
			s.ReadOnlyWorkspace = ro
			s.Filesystem.Deny = append(s.Filesystem.Deny, "**/.env", "**/*.pem")
		}
	}

	t.Run("read-only-workspace", func(t *testing.T) {
		sb := sandboxtest.New(t, "read-only", sandboxtest.Workspace(t), deny(true))
		if line := sb.Executor.Report().Status(profile.DenyNewFiles); line.Status != sandbox.Enforced {
			t.Fatalf("with a read-only workspace the Report should say deny-new-files enforced: %+v", line)
		}
		o := runThenPlant(t, sb, p, secret, ".env", "keys/id.pem")
		requireNotIn(t, o, secret)
		requireDenial(t, o, filepath.Join(sb.Workspace, ".env"))
	})
	t.Run("writable-workspace", func(t *testing.T) {
		sb := sandboxtest.New(t, preset, sandboxtest.Workspace(t), deny(false))
		line := sb.Executor.Report().Status(profile.DenyNewFiles)
		o := runThenPlant(t, sb, p, secret, ".env", "keys/id.pem")
		// keys/id.pem keeps its denied name (the link added a second
		// one), so the last cat is refused.
		requireDenial(t, o, filepath.Join(sb.Workspace, "keys/id.pem"))
		if !sandboxtest.Exists(filepath.Join(sb.Workspace, "moved")) || !sandboxtest.Exists(filepath.Join(sb.Workspace, "linked")) {
			t.Fatalf("the probe did not rename and link on the host, so it proves nothing\n%s", o)
		}
		if !strings.Contains(o.Output(), secret) {
			return // the gap is closed
		}
		if line.Status == sandbox.Enforced || !strings.Contains(line.Reason, "rename or hard-link") {
			t.Fatalf("ATTACK SUCCEEDED and the Report does not say so: %+v\n%s", line, o)
		}
		t.Skipf("KNOWN GAP: a late file renamed or linked away from its denied name in a writable directory is readable; the Report says %s: %s", line.Status, line.Reason)
	})
}

// waitForGo makes a probe wait (up to 20 s) until the test creates "go"
// in the workspace, after planting the late files.
const waitForGo = `i=0
while [ ! -e go ]; do
	i=$((i+1)); [ $i -gt 2000 ] && { echo "no go marker"; exit 3; }
	sleep 0.01
done`

// plantLate writes secret into each workspace-relative file, then
// creates the "go" marker.
func plantLate(t *testing.T, ws, secret string, files ...string) {
	t.Helper()
	for _, f := range files {
		path := filepath.Join(ws, f)
		must(t, os.MkdirAll(filepath.Dir(path), 0o755))
		must(t, os.WriteFile(path, []byte(secret+"\n"), 0o644))
	}
	must(t, os.WriteFile(filepath.Join(ws, "go"), nil, 0o644))
}

// runThenPlant starts p in the sandbox (Start returns once the command
// runs, so the view and the watch are in place), plants the late files
// and waits.
func runThenPlant(t *testing.T, sb *sandboxtest.Sandbox, p sandboxtest.Probe, secret string, files ...string) sandboxtest.Outcome {
	t.Helper()
	for _, f := range files {
		if sandboxtest.Exists(filepath.Join(sb.Workspace, f)) {
			t.Fatalf("%s exists before the run; the test needs it to appear after the start", f)
		}
	}
	r := sb.Start(t, p)
	plantLate(t, sb.Workspace, secret, files...)
	return r.Wait()
}

// requireDenial fails the test unless the Result lists a filesystem
// denial of path.
func requireDenial(t *testing.T, o sandboxtest.Outcome, path string) {
	t.Helper()
	for _, d := range o.Result.Denials {
		if d.Kind == "filesystem" && d.Target == path {
			return
		}
	}
	t.Errorf("the Result lists no filesystem denial of %s: %+v", path, o.Result.Denials)
}

// A file that appears under a system path at a denied name after the run
// started (the host regenerates an SSH host key, or passwd(1) renames a
// new /etc/shadow into place): Landlock's rules name only the entries
// /etc held at the start, so the new file cannot be opened, whatever its
// name. The evidence is the secret, which must not appear in the output;
// the control reads the same files on the host. The files are created in
// the host's /etc/ssh and removed again.
func TestAttackDenySystemPathAfterStart(t *testing.T) {
	if sandboxtest.Unprivileged() {
		t.Skip("the test writes into the host's /etc/ssh; the root run covers it")
	}
	if fi, err := os.Stat("/etc/ssh"); err != nil || !fi.IsDir() {
		t.Skip("no /etc/ssh on this host")
	}
	secret := sandboxtest.Marker(t, "late-host-key")
	base := "airlock-test-" + strings.ReplaceAll(t.Name(), "/", "-")
	denied := "/etc/ssh/ssh_host_" + base + "_key" // matches the presets' ssh_host_*_key
	other := "/etc/ssh/" + base + ".conf"          // denied by no entry
	t.Cleanup(func() { os.Remove(denied); os.Remove(other) })
	sb := sandboxtest.New(t, preset, sandboxtest.Workspace(t), nil)
	if line := sb.Executor.Report().Status(profile.DenyNewFiles); line.Status != sandbox.Enforced {
		t.Fatalf("the Report should say deny-new-files is enforced for system paths: %+v", line)
	}
	p := sandboxtest.Probe{Args: sandboxtest.Sh(waitForGo+`
for f; do
	if cat "$f"; then echo "READ $f"; else echo "REFUSED $f"; fi
done`, denied, other)}
	r := sb.Start(t, p)
	for _, f := range []string{denied, other} {
		must(t, os.WriteFile(f, []byte(secret+"\n"), 0o600))
	}
	must(t, os.WriteFile(filepath.Join(sb.Workspace, "go"), nil, 0o644))
	o := r.Wait()
	requireControl(t, sb.Host(t, p), secret)
	requireNotIn(t, o, secret)
	for _, f := range []string{denied, other} {
		if !strings.Contains(o.Stdout, "REFUSED "+f) {
			t.Errorf("ATTACK SUCCEEDED: %s, created under /etc after the start, was readable\n%s", f, o)
		}
	}
}
