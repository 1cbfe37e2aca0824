package sandbox_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// endStepNames are the steps of the end of a run, in their order
// (finish.go's endSteps, and EndStep's doc).
var endStepNames = []string{"helper", "output", "guards", "exit_status", "cgroup_counters", "cleanup", "write_budget", "protected_paths", "result"}

// TestEndSteps: every step of the end of a run runs, in its order, and
// is in the Report's timings as a number of its own; the steps happen
// within the run's total, and nothing the start placed in the workspace
// is left there, nor its journal.
func TestEndSteps(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	ex, ws := newExecutor(t, nil)
	res := run(t, ex, "echo x > out")
	var names []string
	var sum int64
	for _, s := range res.Timings.End {
		names = append(names, s.Step)
		if s.Duration < 0 {
			t.Errorf("step %s took %v", s.Step, s.Duration)
		}
		sum += int64(s.Duration)
	}
	if !slices.Equal(names, endStepNames) {
		t.Fatalf("end steps %v, want %v", names, endStepNames)
	}
	if sum > int64(res.Timings.Total) {
		t.Errorf("the end's steps add up to %d ns, more than the run's total %v", sum, res.Timings.Total)
	}
	// The protected paths' step removes the run's journal once its
	// check passed, and what the start placed in the workspace.
	if left, _ := filepath.Glob(filepath.Join(state, "airlock", "runs", "*")); len(left) > 0 {
		t.Errorf("run journal left behind: %v", left)
	}
	if entries, err := os.ReadDir(ws); err != nil || len(entries) != 1 || entries[0].Name() != "out" {
		t.Errorf("workspace after the run holds %v (%v), want only the run's out", entries, err)
	}

	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Timings map[string]int64 `json:"timings"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("timings are not all numbers: %v\n%s", err, b)
	}
	for _, n := range endStepNames {
		if _, ok := rep.Timings["end_"+n+"_ns"]; !ok {
			t.Errorf("timings have no end_%s_ns: %v", n, rep.Timings)
		}
	}
	if rep.Timings["total_ns"] != int64(res.Timings.Total) || rep.Timings["setup_ns"] != int64(res.Timings.Setup) {
		t.Errorf("timings JSON %v lost the Result's own (total %d, setup %d)", rep.Timings, res.Timings.Total, res.Timings.Setup)
	}
}
