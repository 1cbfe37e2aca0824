package main

import (
	"encoding/json"
	"os/exec"
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
	ws := t.TempDir()
	cmd := exec.Command(bin, "run", "--workspace", ws, "--report", "-", "--", "sh", "-c", "exit 0")
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
	if time.Duration(tm["process_ns"]) > outside {
		t.Errorf("process_ns %v > %v, the time from before the fork to after the exit", time.Duration(tm["process_ns"]), outside)
	}
}
