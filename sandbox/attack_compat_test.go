package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// Nothing airlock adds may make a call fail that would succeed without
// it, except a refusal it reports. These tests run ordinary programs
// whose calls meet a guard and compare them with the same program on the
// host.

// signalledWrites is a dash script that writes 3,000 files (each an
// open with O_CREAT, which the create guard stops) while a child sends
// it SIGUSR1, which its trap handles (dash installs the handler without
// SA_RESTART). It prints how many writes failed and how many signals
// arrived.
const signalledWrites = `trap 'n=$((n+1))' USR1
n=0 fails=0 i=0
mkdir -p out
( while kill -USR1 $$ 2>/dev/null; do :; done ) &
while [ $i -lt 3000 ]; do
	echo x > out/f.$((i % 20)) 2>/dev/null || fails=$((fails+1))
	i=$((i+1))
done
kill $! 2>/dev/null; wait
echo "fails=$fails signals=$n"`

// TestAttackSignalDuringCreate: a signal that arrived while the create
// guard held an open(O_CREAT) made it fail with EINTR (2,937 of 3,000
// writes of such a script). The notifier's wait is killable only once
// the supervisor holds the call (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV):
// a write the guard holds for a second while the script gets three
// signals its trap handles succeeds, as on the host (the control), and the trap
// still runs. The flood of signalledWrites is logged: a signal before
// the supervisor has picked the call up still interrupts it (the
// kernel's rule), which the supervisor keeps short (notifyrecv.go), and
// the protected-paths line of the Report says so.
func TestAttackSignalDuringCreate(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	h := sb.Executor.Report().Host
	if !h.CreateGuard {
		t.Skip("no create guard on this host: " + h.CreateGuardReason)
	}
	if !h.KillableWait {
		t.Skip("kernel without SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV: the Report lists the EINTR among its silent refusals")
	}
	held := sandboxtest.Probe{Args: []string{"/bin/dash", "-c", `trap 'n=$((n+1))' USR1
n=0
( for i in 1 2 3; do sleep 0.2; kill -USR1 $$; done ) &
echo kept > held.txt && echo wrote
i=0; while [ $n -lt 3 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
echo "signals=$n"`}}
	host := sb.Host(t, held)
	if !strings.Contains(host.Stdout, "wrote") || !strings.Contains(host.Stdout, "signals=3") {
		t.Fatalf("control: the script fails on the host: %s", host)
	}
	restore := sandbox.HoldCreatesForTest(time.Second)
	o := sb.Run(t, held)
	restore()
	if !strings.Contains(o.Stdout, "wrote") || strings.Contains(o.Stderr, "Interrupted") {
		t.Errorf("a signal made a held create fail: %s", o)
	}
	if data, err := os.ReadFile(filepath.Join(sb.Workspace, "held.txt")); err != nil || string(data) != "kept\n" {
		t.Errorf("held.txt on the host: %q, %v", data, err)
	}
	// Signals sent while the call is held are delivered when it returns
	// (three of one kind merge into one).
	if !strings.Contains(o.Stdout, "signals=") || strings.Contains(o.Stdout, "signals=0") {
		t.Errorf("no signal reached the trap: %s", o)
	}
	if len(o.Result.Denials) != 0 {
		t.Errorf("an ordinary write was refused: %+v", o.Result.Denials)
	}

	// What remains is said where the guard is named.
	if m := sb.Executor.Report().Status(profile.ProtectedPaths).Mechanism; !strings.Contains(m, "EINTR") {
		t.Errorf("the protected-paths line does not say a stopped call can still fail with EINTR: %s", m)
	}
	flood := sandboxtest.Probe{Args: []string{"/bin/dash", "-c", signalledWrites}}
	if host := sb.Host(t, flood); !strings.Contains(host.Stdout, "fails=0 ") {
		t.Fatalf("control: the flood fails on the host: %s", host)
	}
	o = sb.Run(t, flood)
	t.Logf("under a flood of signals: %s", strings.TrimSpace(o.Stdout))
}

// TestAttackCreatesAtExit: background children still writing files when
// the command exits meet a guard proxy the ending run has already taken
// down. The run said "the guard proxy is gone ... the call was refused"
// and listed a denial in a run that succeeded; the calls' processes are
// being killed with the run, so nothing was refused that the command
// could see. Each of many runs ends with writers in flight: none reports
// a refusal, as none happens on the host (the control).
func TestAttackCreatesAtExit(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	if !sb.Executor.Report().Host.CreateGuard {
		t.Skip("no create guard on this host: " + sb.Executor.Report().Host.CreateGuardReason)
	}
	marker := sandboxtest.Marker(t, "bgwriter")
	p := sandboxtest.Probe{Args: sandboxtest.Sh(`for w in 1 2 3 4; do ( while :; do echo x > bg.$w; done ) >/dev/null 2>&1 & done
i=0; while [ ! -e bg.4 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
echo started`, marker)}
	host := sb.Host(t, p)
	sandboxtest.KillProcs(marker)
	if !strings.Contains(host.Stdout, "started") || host.Stderr != "" {
		t.Fatalf("control: %s", host)
	}
	for i := range 10 {
		o := sb.Run(t, p)
		if o.Result.Status != sandbox.StatusSucceeded || !strings.Contains(o.Stdout, "started") {
			t.Errorf("run %d: %s", i, o)
		}
		if strings.Contains(o.Stderr, "airlock:") || len(o.Result.Denials) != 0 {
			t.Errorf("run %d reported a refusal that did not happen: %+v\n%s", i, o.Result.Denials, o)
		}
	}
}
