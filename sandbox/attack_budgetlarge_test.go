package sandbox_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// TestAttackWriteFillLargeWorkspace: the write budget holds in a
// workspace of 100,000 files (a node_modules), where each walk of the
// account takes hundreds of milliseconds and the command can write on
// meanwhile. Under a 128 MiB budget the probe writes twice that in 1 MiB
// files. Host-side evidence: what the workspace holds after the run
// beyond what it held before. The positive control is the same probe
// under a 1 GiB budget, which writes it all and succeeds.
func TestAttackWriteFillLargeWorkspace(t *testing.T) {
	const budget = 128 << 20
	const files = 100000
	// What one check may let through, as in TestAttackWriteFill: the
	// account's cost must not grow with the workspace.
	const slack = 48 << 20
	// One workspace for both runs: making 100,000 files takes longer
	// than the runs. It is on a filesystem of its own, as in
	// TestAttackWriteFill: space others free on a shared disk would
	// offset the run's writes.
	ws := sandboxtest.OwnFilesystemWorkspace(t)
	for i := 0; i < files/100; i++ {
		d := filepath.Join(ws, "node_modules", fmt.Sprintf("pkg%04d", i))
		must(t, os.MkdirAll(d, 0o755))
		for j := 0; j < 100; j++ {
			must(t, os.WriteFile(filepath.Join(d, fmt.Sprintf("f%02d.js", j)), nil, 0o644))
		}
	}
	run := func(t *testing.T, maxWrite int64) (sandboxtest.Outcome, int64) {
		sb := sandboxtest.New(t, preset, ws, func(s *profile.Spec) { s.Budgets.MaxWrite = profile.Size(maxWrite) })
		before := diskUse(t, ws)
		o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Py(workspaceFill, fmt.Sprint(2*budget>>20), "many"), Timeout: 120 * time.Second})
		grew := diskUse(t, ws) - before
		fills, _ := filepath.Glob(filepath.Join(ws, "fill*"))
		for _, f := range fills {
			must(t, os.Remove(f))
		}
		return o, grew
	}
	c, grew := run(t, 1<<30)
	if c.Result.Status != sandbox.StatusSucceeded || grew < 2*budget {
		t.Fatalf("positive control failed: under a 1 GiB write budget the workspace grew by %d MiB (want %d)\n%s", grew>>20, 2*budget>>20, c)
	}
	o, grew := run(t, budget)
	if grew > budget+slack {
		t.Errorf("ATTACK SUCCEEDED: under a %d MiB write budget the workspace of %d files grew by %d MiB\n%s", budget>>20, files, grew>>20, o)
	}
	if o.Result.Status != sandbox.StatusLimitExceeded || !hasDenial(o.Result, "write") {
		t.Errorf("want status limit_exceeded with a write denial\n%s\ndenials %+v", o, o.Result.Denials)
	}
	t.Logf("attack: status %s, the workspace grew by %d MiB, growth %v; prepare %v, run %v", o.Result.Status, grew>>20,
		o.Result.Limits["write_growth_bytes"], o.Result.Timings.Prepare, o.Result.Timings.Run)
}
