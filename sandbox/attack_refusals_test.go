package sandbox_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// findDenial returns the Result's denial of kind for target, if any.
func findDenial(res *sandbox.Result, kind, target string) (sandbox.Denial, bool) {
	for _, d := range res.Denials {
		if d.Kind == kind && d.Target == target {
			return d, true
		}
	}
	return sandbox.Denial{}, false
}

func silentAbout(silent []string, what string) bool {
	for _, s := range silent {
		if strings.Contains(s, what) {
			return true
		}
	}
	return false
}

// A read of a masked path (a deny entry present at the start, a masked
// directory, one of /proc's kernel entries) is refused and, where the
// supervisor answers fanotify permission events (root), reported: an
// airlock line on the run's stderr and a "filesystem" Denial for each
// path, the content never shown. Without them (uid 65534) the masks are
// mode 000, the kernel refuses the read unseen, and the Report's Silent
// list says so. The control reads the same paths on the host.
func TestAttackMaskedReadVisible(t *testing.T) {
	ws := sandboxtest.Workspace(t)
	secret := sandboxtest.Marker(t, "masked")
	env := filepath.Join(ws, ".env")
	keys := filepath.Join(ws, "keys")
	must(t, os.WriteFile(env, []byte("TOKEN="+secret+"\n"), 0o644))
	must(t, os.Mkdir(keys, 0o755))
	must(t, os.WriteFile(filepath.Join(keys, "id"), []byte(secret), 0o644))
	sb := sandboxtest.New(t, preset, ws, func(s *profile.Spec) {
		s.Filesystem.Deny = append(s.Filesystem.Deny, "**/.env", filepath.Join(ws, "keys"))
	})
	probe := sandboxtest.Probe{Args: sandboxtest.Sh(`cat .env; ls keys; cat /proc/kallsyms >/dev/null && echo kallsyms-read; true`)}
	requireControl(t, sb.Host(t, probe), secret)
	o := sb.Run(t, probe)
	requireNotIn(t, o, secret, "kallsyms-read")
	rep := sb.Executor.Report()
	if !rep.Host.FanotifyPerm {
		if !silentAbout(rep.Silent, "reads of masked paths") || !silentAbout(o.Result.Silent, "reads of masked paths") {
			t.Errorf("no fanotify permission events here, but the Report does not say masked reads are silent: %q / %q", rep.Silent, o.Result.Silent)
		}
		if !strings.Contains(o.Stderr, "Permission denied") {
			t.Errorf("the masked read did not fail with EACCES: %s", o)
		}
		return
	}
	if silentAbout(rep.Silent, "reads of masked paths") {
		t.Errorf("the Report calls masked reads silent on a host that reports them: %q", rep.Silent)
	}
	for _, target := range []string{env, keys, "/proc/kallsyms"} {
		d, ok := findDenial(o.Result, "filesystem", target)
		if !ok || !d.Live || !strings.Contains(d.Reason, "read refused: masked") {
			t.Errorf("no live filesystem denial for the read of %s: %+v", target, o.Result.Denials)
		}
		if !strings.Contains(o.Stderr, "airlock: filesystem: read refused: masked") || !strings.Contains(o.Stderr, "("+target+")") {
			t.Errorf("no airlock line on stderr for the read of %s:\n%s", target, o.Stderr)
		}
	}
	if !strings.Contains(o.Stderr, "Operation not permitted") {
		t.Errorf("the masked read did not fail with EPERM (the supervisor's answer): %s", o)
	}
	// Nothing else is reported: ordinary reads raise no event.
	for _, d := range o.Result.Denials {
		if d.Target != env && d.Target != keys && d.Target != "/proc/kallsyms" {
			t.Errorf("unexpected denial %+v", d)
		}
	}
}

// A program the strict preset refuses to run (outside the exec paths:
// here the private /tmp, a noexec mount) fails with EACCES in the kernel;
// the supervisor, which sees the exec stop at its notifier, says so on
// stderr and records an "exec" Denial. The control is the workspace
// preset, where the same program runs and nothing is reported.
func TestAttackStrictExecVisible(t *testing.T) {
	ws := sandboxtest.Workspace(t)
	mark := filepath.Join(ws, "ran")
	probe := sandboxtest.Probe{Args: sandboxtest.Sh(`cp /usr/bin/touch /tmp/x && chmod 755 /tmp/x && /tmp/x "$1"; exit 0`, mark)}
	loose := sandboxtest.New(t, "workspace", ws, nil)
	ctl := loose.Run(t, probe)
	if !sandboxtest.Exists(mark) {
		t.Fatalf("control: the program did not run in the workspace preset: %s", ctl)
	}
	if _, ok := findDenial(ctl.Result, "exec", "/tmp/x"); ok || strings.Contains(ctl.Stderr, "airlock: exec") {
		t.Errorf("control: an exec the workspace preset allows was reported: %s", ctl)
	}
	must(t, os.Remove(mark))

	strict := sandboxtest.New(t, "strict", ws, nil)
	o := strict.Run(t, probe)
	if sandboxtest.Exists(mark) {
		t.Fatalf("ATTACK SUCCEEDED: the strict preset ran a program from /tmp: %s", o)
	}
	rep := strict.Executor.Report()
	if !rep.Host.UnixGuard {
		if !silentAbout(rep.Silent, "execs refused") {
			t.Errorf("no seccomp notifier here, but the Report does not say refused execs are silent: %q", rep.Silent)
		}
		return
	}
	d, ok := findDenial(o.Result, "exec", "/tmp/x")
	if !ok || !d.Live || !strings.Contains(d.Reason, "outside the profile's exec paths") {
		t.Errorf("no live exec denial for /tmp/x: %+v", o.Result.Denials)
	}
	if !strings.Contains(o.Stderr, "airlock: exec: exec refused") || !strings.Contains(o.Stderr, "(/tmp/x)") {
		t.Errorf("no airlock line on stderr for the refused exec:\n%s", o.Stderr)
	}
	// Execs the profile allows (sh, cp, chmod) are not reported.
	if n := len(enforced(o.Result)); n != 1 {
		t.Errorf("want exactly the one exec denial, got %d: %+v", n, o.Result.Denials)
	}
}

// The lines are rate-limited: a command that makes 150 distinct refused
// execs gets at most 100 airlock lines and one saying more followed, and
// the Result still lists every one.
func TestAttackRefusalLinesRateLimited(t *testing.T) {
	ws := sandboxtest.Workspace(t)
	strict := sandboxtest.New(t, "strict", ws, nil)
	if !strict.Executor.Report().Host.UnixGuard {
		t.Skip("no seccomp notifier here: refused execs are not reported (the Report says so)")
	}
	const n = 150
	o := strict.Run(t, sandboxtest.Probe{Args: sandboxtest.Sh(fmt.Sprintf(
		`cp /usr/bin/true /tmp/t && chmod 755 /tmp/t; i=0; while [ $i -lt %d ]; do ln -s t /tmp/l$i; ln /tmp/t /tmp/h$i; /tmp/h$i; i=$((i+1)); done 2>/dev/null; exit 0`, n))})
	lines := strings.Count(o.Stderr, "airlock: exec: exec refused")
	more := strings.Count(o.Stderr, "airlock: more refusals")
	execs := 0
	for _, d := range o.Result.Denials {
		if d.Kind == "exec" {
			execs++
		}
	}
	if lines != 100 || more != 1 || execs != n {
		t.Errorf("%d exec lines and %d 'more' lines on stderr, %d exec denials; want 100, 1 and %d\n%s", lines, more, execs, n, o)
	}
}

// A denied path that appears during the run (here the command makes it)
// is refused by the deny watch as root, and that refusal too is said on
// stderr as it happens, not only listed when the run ends.
func TestAttackLateDenyVisible(t *testing.T) {
	ws := sandboxtest.Workspace(t)
	sb := sandboxtest.New(t, preset, ws, func(s *profile.Spec) {
		s.Filesystem.Deny = append(s.Filesystem.Deny, "**/late.txt")
	})
	if !sb.Executor.Report().Host.FanotifyPerm {
		t.Skip("no fanotify permission events here: deny entries cover only files present at start (the Report says so)")
	}
	late := filepath.Join(ws, "late.txt")
	o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Sh(`echo late-secret > late.txt; cat late.txt; exit 0`)})
	requireNotIn(t, o, "late-secret")
	d, ok := findDenial(o.Result, "filesystem", late)
	if !ok || !d.Live || !strings.Contains(o.Stderr, "airlock: filesystem: open refused: matches deny") || !strings.Contains(o.Stderr, "("+late+")") {
		t.Errorf("the late deny match was not said on stderr as it happened: denials %+v\n%s", o.Result.Denials, o)
	}
}
