package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// newExecutor builds a workspace-preset Executor over a fresh workspace.
func newExecutor(t *testing.T, edit func(*profile.Spec)) (*sandbox.Executor, string) {
	t.Helper()
	ws := t.TempDir()
	s := profile.Preset("workspace")
	s.Workspace = ws
	if edit != nil {
		edit(&s)
	}
	p, err := profile.New(s)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := sandbox.New(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	return ex, p.Workspace()
}

func run(t *testing.T, ex *sandbox.Executor, script string) *sandbox.Result {
	t.Helper()
	res, err := ex.Run(context.Background(), sandbox.Cmd{Args: []string{"sh", "-c", script}, Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatalf("run %q: %v", script, err)
	}
	return res
}

// TestRealTools runs the tools an agent uses every day inside the
// workspace preset and checks their effects on the host.
func TestRealTools(t *testing.T) {
	ex, ws := newExecutor(t, nil)
	t.Run("git", func(t *testing.T) {
		// A repository is made on the host: at the top of a workspace
		// that has none, .git is a read-only placeholder for the run.
		if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
		res := run(t, ex, `set -e
echo hello > README && git add README && git -c user.email=a@b.c -c user.name=a commit -qm first && git status --short && git log --oneline`)
		if res.Status != sandbox.StatusSucceeded {
			t.Fatalf("status %s, stderr %s", res.Status, res.Stderr)
		}
		out, err := exec.Command("git", "-C", ws, "log", "--oneline").Output()
		if err != nil || !strings.Contains(string(out), "first") {
			t.Fatalf("host sees no commit: %q %v", out, err)
		}
	})
	t.Run("python3", func(t *testing.T) {
		res := run(t, ex, `python3 -c 'import json,sys; print(json.dumps({"sum": sum(range(10))}))'`)
		if res.Status != sandbox.StatusSucceeded || strings.TrimSpace(string(res.Stdout)) != `{"sum": 45}` {
			t.Fatalf("status %s stdout %q stderr %q", res.Status, res.Stdout, res.Stderr)
		}
	})
	t.Run("pipeline", func(t *testing.T) {
		res := run(t, ex, `printf 'b\na\nc\na\n' | sort | uniq -c | sort -rn | head -1 > counts.txt; cat counts.txt`)
		host, err := os.ReadFile(filepath.Join(ws, "counts.txt"))
		if res.Status != sandbox.StatusSucceeded || err != nil || !strings.Contains(string(host), "2 a") {
			t.Fatalf("status %s, host file %q %v, stderr %s", res.Status, host, err, res.Stderr)
		}
	})
	t.Run("go build", func(t *testing.T) {
		if _, err := os.Stat("/usr/local/go/bin/go"); err != nil {
			t.Skip("no Go toolchain at /usr/local/go to run inside the sandbox")
		}
		if err := os.WriteFile(filepath.Join(ws, "go.mod"), []byte("module hello\n\ngo 1.22\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nfunc main() { println(\"built in airlock\") }\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := ex.Run(context.Background(), sandbox.Cmd{
			Args: []string{"/usr/local/go/bin/go", "build", "-o", "hello", "."},
			Env:  []string{"GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "CGO_ENABLED=0"},
		})
		if err != nil || res.Status != sandbox.StatusSucceeded {
			t.Fatalf("go build: %v %+v stderr %s", err, res, res.Stderr)
		}
		out, err := exec.Command(filepath.Join(ws, "hello")).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "built in airlock") {
			t.Fatalf("binary built in the sandbox: %q %v", out, err)
		}
	})
}

func TestStatuses(t *testing.T) {
	ex, _ := newExecutor(t, func(s *profile.Spec) { s.Budgets.Output = 1 << 20 })
	tests := []struct {
		name   string
		script string
		cmd    sandbox.Cmd
		want   sandbox.Status
		code   int
	}{
		{"exit 0", "true", sandbox.Cmd{}, sandbox.StatusSucceeded, 0},
		{"exit 3", "exit 3", sandbox.Cmd{}, sandbox.StatusFailed, 3},
		// A child killed by a signal is what a shell reports (128+9).
		{"child killed by signal", `sh -c 'kill -9 $$'`, sandbox.Cmd{}, sandbox.StatusFailed, 137},
		{"timeout", "sleep 30", sandbox.Cmd{Timeout: 300 * time.Millisecond}, sandbox.StatusTimedOut, -1},
		{"output cap", "yes airlock", sandbox.Cmd{}, sandbox.StatusOutputLimitExceeded, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.cmd
			c.Args = []string{"sh", "-c", tt.script}
			res, err := ex.Run(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tt.want || res.ExitCode != tt.code {
				t.Errorf("status %s code %d; want %s %d", res.Status, res.ExitCode, tt.want, tt.code)
			}
			if res.Status != sandbox.StatusSucceeded && res.ExitCode == 0 {
				t.Error("a non-succeeded run reports exit code 0")
			}
		})
	}
	t.Run("output kept up to the cap", func(t *testing.T) {
		res := run(t, ex, "yes airlock")
		if int64(len(res.Stdout)) != 1<<20 || res.OutputBytes <= 1<<20 {
			t.Errorf("kept %d bytes of %d; want exactly the 1MiB cap", len(res.Stdout), res.OutputBytes)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		p, err := ex.Prepare(ctx, sandbox.Cmd{Args: []string{"sleep", "30"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		time.AfterFunc(200*time.Millisecond, cancel)
		res, err := p.Wait()
		if err != nil || res.Status != sandbox.StatusCancelled {
			t.Fatalf("got %v %v; want cancelled", res, err)
		}
	})
	t.Run("stdin and writers", func(t *testing.T) {
		var out, errb bytes.Buffer
		res, err := ex.Run(context.Background(), sandbox.Cmd{
			Args:  []string{"sh", "-c", "tr a-z A-Z; echo oops >&2"},
			Stdin: strings.NewReader("quiet\n"), Stdout: &out, Stderr: &errb,
		})
		if err != nil || res.Status != sandbox.StatusSucceeded || out.String() != "QUIET\n" || errb.String() != "oops\n" {
			t.Fatalf("res %+v err %v out %q err %q", res, err, out.String(), errb.String())
		}
	})
}

func TestSetupErrors(t *testing.T) {
	ex, ws := newExecutor(t, nil)
	_, err := ex.Run(context.Background(), sandbox.Cmd{Args: []string{"no-such-program-xyz"}})
	var se *sandbox.SetupError
	if !errors.As(err, &se) || !errors.Is(err, sandbox.ErrSetup) || se.Step != "find command" {
		t.Fatalf("err = %v; want a SetupError at step \"find command\"", err)
	}
	_, err = ex.Prepare(context.Background(), sandbox.Cmd{Args: []string{"true"}, Dir: "/var/lib"})
	if !errors.As(err, &se) || se.Step != "working directory" {
		t.Fatalf("err = %v; want a SetupError at step \"working directory\"", err)
	}
	_, err = ex.Prepare(context.Background(), sandbox.Cmd{})
	if err == nil {
		t.Fatal("an empty command was accepted")
	}
	_ = ws
}

func TestRequiredGuaranteeRefused(t *testing.T) {
	ws := t.TempDir()
	s := profile.Preset("workspace")
	s.Workspace = ws
	// Network "all" filters nothing by host:port, so a profile that
	// requires it cannot run.
	s.Network = profile.NetworkSpec{Mode: profile.NetworkModeAll}
	s.Require = []string{"network-filtered"}
	p, err := profile.New(s)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sandbox.New(p)
	var ue *sandbox.UnavailableError
	if !errors.As(err, &ue) || !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "network-filtered") {
		t.Fatalf("err = %v; want an UnavailableError naming network-filtered", err)
	}
}

func TestReportLevel(t *testing.T) {
	ex, _ := newExecutor(t, nil)
	r := ex.Report()
	if r.Level == sandbox.LevelNone {
		t.Fatalf("level none on a host that ran the other tests: %s", r)
	}
	for _, g := range r.Guarantees {
		if g.Status == sandbox.Enforced && g.Mechanism == "" {
			t.Errorf("%s enforced without a mechanism", g.Guarantee)
		}
		if (g.Status == sandbox.Degraded || g.Status == sandbox.Unavailable) && g.Reason == "" {
			t.Errorf("%s %s without a reason", g.Guarantee, g.Status)
		}
	}
}

// TestNothingLeftBehind: after runs that end every way a run can end, no
// cgroup of airlock's remains and no process of the run survives.
func TestNothingLeftBehind(t *testing.T) {
	ex, _ := newExecutor(t, func(s *profile.Spec) { s.Budgets.Output = 4096 })
	marker := "airlock-left-behind-" + strings.ReplaceAll(t.Name(), "/", "-")
	// Other programs on this machine may run airlock too, and some tests
	// leave a killed supervisor's cgroup for the next airlock to sweep:
	// only cgroups of this supervisor (named with its pid, CgroupName)
	// that appear during this test count.
	before := airlockCgroups(t)
	mine := fmt.Sprintf("airlock-%d-", os.Getpid())
	for _, c := range []sandbox.Cmd{
		// sh -c '...' MARKER puts the marker in the long-lived shell's
		// argv (sleep itself would reject an extra argument).
		{Args: []string{"sh", "-c", "(setsid sh -c 'sleep 1000; :' " + marker + " &) ; sleep 0.2"}},
		{Args: []string{"sh", "-c", "sh -c 'sleep 1000; :' " + marker + " & sleep 1000"}, Timeout: 300 * time.Millisecond},
		{Args: []string{"sh", "-c", "sh -c 'sleep 1000; :' " + marker + " & sleep 0.2; yes"}},
		{Args: []string{"no-such-program-" + marker}},
	} {
		if _, err := ex.Run(context.Background(), c); err != nil && !errors.Is(err, sandbox.ErrSetup) {
			t.Fatal(err)
		}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), marker) {
			t.Errorf("a process of the run survived: %s %q", p, b)
		}
	}
	// Positive control: the same detached shell outside the sandbox is
	// found by the scan above (and then ended by this test, by its pid).
	ctl := exec.Command("sh", "-c", "sleep 1000; :", marker)
	// Its own process group, ended whole: killing the shell alone would
	// leave its sleep running on the host.
	ctl.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := ctl.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(-ctl.Process.Pid, syscall.SIGKILL); _ = ctl.Wait() }()
	var b []byte
	for start := time.Now(); len(b) == 0 && time.Since(start) < 2*time.Second; time.Sleep(5 * time.Millisecond) {
		b, _ = os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", ctl.Process.Pid)) // empty until exec is done
	}
	if !strings.Contains(string(b), marker) {
		t.Fatalf("positive control: the marker is not in the host process's cmdline %q", b)
	}
	for dir := range airlockCgroups(t) {
		if !before[dir] && strings.HasPrefix(filepath.Base(dir), mine) {
			t.Errorf("cgroup left behind: %s", dir)
		}
	}
}

// airlockCgroups lists every airlock-* cgroup directory on the machine.
func airlockCgroups(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	_ = filepath.WalkDir("/sys/fs/cgroup", func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if strings.HasPrefix(d.Name(), "airlock-") {
			out[path] = true
			return filepath.SkipDir
		}
		return nil
	})
	return out
}

// TestBudgetHitRecorded: a budget the kernel enforced is in the Result
// even when the command itself succeeds.
func TestBudgetHitRecorded(t *testing.T) {
	if !sandbox.ProbeHost().CgroupWritable {
		t.Skip("the pids budget is counted by the cgroup, which this user cannot create")
	}
	ex, _ := newExecutor(t, func(s *profile.Spec) { s.Budgets.Pids = 16 })
	res := run(t, ex, `python3 -c '
import os, time
for i in range(40):
    try:
        if os.fork() == 0:
            time.sleep(5)
            os._exit(0)
    except OSError:
        pass
'`)
	if res.Status != sandbox.StatusSucceeded {
		t.Fatalf("status %s", res.Status)
	}
	found := false
	for _, d := range res.Denials {
		found = found || d.Kind == "pids"
	}
	if !found {
		t.Errorf("no pids denial in %+v", res.Denials)
	}
}
