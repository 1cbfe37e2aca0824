package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestReportTimingsCoverTheProcess: the Report's timings account for the
// whole airlock process, from its start to the Report's write, not only
// the library's Start → Wait: each part is there, the parts fit inside
// the whole in the order they happen, and the whole fits inside what the
// test itself saw from before the fork to after the exit (a start
// estimate that reached back before the fork would break that).
func TestReportTimingsCoverTheProcess(t *testing.T) {
	bin := buildAirlock(t)
	for _, tc := range []struct {
		name   string
		asUser bool
	}{{"as-caller", false}, {"as-uid-65534", true}} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, "run", "--workspace", t.TempDir(), "--report", "-", "--", "sh", "-c", "exit 0")
			if tc.asUser {
				cmd = asNobody(t, bin)
			}
			checkProcessTimings(t, cmd)
		})
	}
}

// asNobody is the same run as uid 65534 (setpriv), with the binary, the
// workspace and HOME where that user can reach them.
func asNobody(t *testing.T, bin string) *exec.Cmd {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("already unprivileged: the other case is this one")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) is not installed")
	}
	root, err := os.MkdirTemp("", "airlock-timings-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	ws, home, nbin := filepath.Join(root, "ws"), filepath.Join(root, "home"), filepath.Join(root, "airlock")
	for _, d := range []string{ws, home} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", bin, nbin).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	cmd := exec.Command(setpriv, "--reuid", "65534", "--regid", "65534", "--clear-groups", "--",
		nbin, "run", "--workspace", ws, "--report", "-", "--", "sh", "-c", "exit 0")
	cmd.Dir = ws
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + home, "LANG=C.UTF-8"}
	return cmd
}

func checkProcessTimings(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	before := time.Now()
	code, out, errOut := runCmd(t, cmd)
	outside := time.Since(before)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Timings map[string]int64 `json:"timings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	tm := rep.Timings
	for _, k := range []string{"process_init_ns", "prepare_ns", "setup_ns", "run_ns", "total_ns", "process_ns"} {
		if tm[k] <= 0 {
			t.Errorf("timings.%s = %d, want > 0 (timings: %v)", k, tm[k], tm)
		}
	}
	if tm["total_ns"] < tm["setup_ns"]+tm["run_ns"] {
		t.Errorf("total_ns %d < setup_ns + run_ns %d", tm["total_ns"], tm["setup_ns"]+tm["run_ns"])
	}
	if parts := tm["process_init_ns"] + tm["prepare_ns"] + tm["total_ns"]; tm["process_ns"] < parts {
		t.Errorf("process_ns %d < process_init_ns + prepare_ns + total_ns = %d: the whole is smaller than its parts", tm["process_ns"], parts)
	}
	// setpriv's own start is inside outside too: the bound still holds.
	if time.Duration(tm["process_ns"]) > outside {
		t.Errorf("process_ns %v > %v, the time from before the fork to after the exit", time.Duration(tm["process_ns"]), outside)
	}
}
