package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/airlockbin"
)

// unprivilegedRun returns a runner of the built CLI as uid 65534 with a
// workspace it owns, for the tests that must hold for real users too.
func unprivilegedRun(t *testing.T, bin string) (ws string, run func(args ...string) (int, string, string)) {
	t.Helper()
	ws, argv := unprivilegedCommand(t, bin)
	return ws, func(args ...string) (int, string, string) {
		cmd := exec.Command("setpriv", argv(args...)...)
		cmd.Dir = ws
		return runCmd(t, cmd)
	}
}

// unprivilegedCommand is unprivilegedRun's setup; argv gives setpriv's
// arguments for one airlock command line.
func unprivilegedCommand(t *testing.T, bin string) (ws string, argv func(args ...string) []string) {
	t.Helper()
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv not installed")
	}
	root, err := os.MkdirTemp("", "airlock-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	ws = filepath.Join(root, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{root, ws} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// HOME is a directory of its own: a workspace that is HOME is refused.
	home := filepath.Join(root, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{ws, home} {
		if err := os.Chown(d, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	bin, err = airlockbin.CopyTo(bin, root)
	if err != nil {
		t.Fatal(err)
	}
	return ws, func(args ...string) []string {
		return append([]string{"--reuid", "65534", "--regid", "65534", "--clear-groups", "--", "env", "HOME=" + home, bin}, args...)
	}
}

// TestRunInit: the command is not PID 1 of the sandbox but the child of a
// minimal init, so a signal it sends itself, or abort(), ends it as it
// would outside: exit 128+N, and the Report names the signal. As root and
// as uid 65534.
func TestRunInit(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	bin := buildAirlock(t)
	cases := []struct {
		name string
		argv []string
		code int
		sig  string
	}{
		{"kill -TERM $$", []string{"sh", "-c", "kill -TERM $$; sleep 5"}, 143, "terminated"},
		{"abort", []string{"python3", "-c", "import os; os.abort()"}, 134, "aborted"},
		{"kill -INT $$", []string{"sh", "-c", "kill -INT $$; sleep 5"}, 130, "interrupt"},
		// Positive controls: an exit status passes through unchanged,
		// 143 included, and is not reported as a signal.
		{"exit 143", []string{"sh", "-c", "exit 143"}, 143, ""},
		{"exit 3", []string{"sh", "-c", "exit 3"}, 3, ""},
		{"not PID 1", []string{"sh", "-c", `test $$ != 1 && test "$(ps -o pid= -p 1 2>/dev/null || echo x)" != "$$"`}, 0, ""},
	}
	check := func(t *testing.T, run func(args ...string) (int, string, string), ws string) {
		for _, c := range cases {
			args := append([]string{"run", "--workspace", ws, "--report", "-", "--"}, c.argv...)
			code, out, errOut := run(args...)
			if code != c.code {
				t.Errorf("%s: exit %d, want %d; stderr %q", c.name, code, c.code, errOut)
			}
			wantSig := `"signal": "` + c.sig + `"`
			if c.sig != "" && !strings.Contains(out, wantSig) {
				t.Errorf("%s: report does not name the signal (%s):\n%.400s", c.name, wantSig, out)
			}
			if c.sig == "" && strings.Contains(out, `"signal": "`) {
				t.Errorf("%s: report names a signal for an exit:\n%.400s", c.name, out)
			}
		}
	}
	t.Run("root", func(t *testing.T) {
		ws := t.TempDir()
		check(t, func(args ...string) (int, string, string) { return runCLI(t, bin, args...) }, ws)
	})
	t.Run("unprivileged", func(t *testing.T) {
		ws, run := unprivilegedRun(t, bin)
		check(t, run, ws)
	})
}

// TestRunMemoryBudgetUnprivileged: where no cgroup is writable (uid 65534
// here) the memory budget is only RLIMIT_AS; a 512MiB budget no longer
// stops Go and Node from starting (their runtimes reserve gigabytes of
// address space), and both stderr and the Report say the budget is only an
// address-space limit. Root, with a cgroup, is the control: a real memory
// limit, no such line.
func TestRunMemoryBudgetUnprivileged(t *testing.T) {
	bin := buildAirlock(t)
	ws, run := unprivilegedRun(t, bin)
	var progs [][]string
	if goBin, err := exec.LookPath("go"); err == nil {
		if real, err := filepath.EvalSymlinks(goBin); err == nil {
			progs = append(progs, []string{real, "version"})
		}
	}
	if node, err := exec.LookPath("node"); err == nil {
		progs = append(progs, []string{node, "-e", "console.log('node ok')"})
	}
	if len(progs) == 0 {
		t.Skip("neither go nor node is installed")
	}
	const line = "only an address-space limit (RLIMIT_AS), raised to 4GiB"
	for _, argv := range progs {
		args := append([]string{"run", "--workspace", ws, "--memory", "512MiB", "--report", "-", "--"}, argv...)
		code, out, errOut := run(args...)
		if strings.Contains(out, `"resource-limits",
      "status": "enforced"`) {
			t.Skip("uid 65534 has a writable cgroup here: the budget is a real one")
		}
		if code != 0 {
			t.Errorf("%s under --memory 512MiB as uid 65534: exit %d, stderr %q", argv[0], code, errOut)
		}
		if !strings.Contains(errOut, "airlock: warning: the memory budget 512MiB is "+line) {
			t.Errorf("%s: stderr does not say the budget is only address space: %q", argv[0], errOut)
		}
		if !strings.Contains(out, line) {
			t.Errorf("%s: the Report does not say the budget is only address space:\n%s", argv[0], out)
		}
	}
	code, out, errOut := runCLI(t, bin, "run", "--workspace", t.TempDir(), "--memory", "512MiB", "--report", "-", "--", "true")
	if code != 0 || strings.Contains(errOut, "address-space") || strings.Contains(out, "address-space") {
		t.Errorf("root control: exit %d, stderr %q; want no address-space note", code, errOut)
	}
}
