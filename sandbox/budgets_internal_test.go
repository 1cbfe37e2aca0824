package sandbox

import (
	"strings"
	"testing"

	"github.com/airlockhq/airlock/profile"
)

// TestReportBudgets: the Report says what bounds each budget, with and
// without a writable cgroup, and a budget that is only degraded keeps
// the level below full.
func TestReportBudgets(t *testing.T) {
	s := profile.Preset("workspace")
	s.Workspace = t.TempDir()
	s.Budgets.Memory = 256 << 20
	s.Budgets.CPU = 1
	s.Budgets.MaxWrite = 1 << 30
	p, err := profile.New(s)
	if err != nil {
		t.Fatal(err)
	}
	host := ProbeHost()
	host.UserNamespaces, host.LandlockABI, host.Seccomp = true, 6, true

	for _, cg := range []bool{true, false} {
		host.CgroupWritable, host.CgroupMode, host.CgroupReason = cg, "v1", "not writable by this user"
		r := reportFor(p, host)
		got := map[string]BudgetStatus{}
		for _, b := range r.Budgets {
			got[b.Budget] = b
		}
		want := map[string]Enforcement{
			BudgetMemory: Degraded, BudgetPids: Degraded, BudgetCPU: Unavailable,
			BudgetWallTime: NotApplied, BudgetOutput: Enforced, BudgetScratch: Enforced, BudgetMaxWrite: Enforced,
		}
		if cg {
			want[BudgetMemory], want[BudgetPids], want[BudgetCPU] = Enforced, Enforced, Enforced
		}
		for name, st := range want {
			if got[name].Status != st {
				t.Errorf("cgroup %v: budget %s is %q (%s), want %q", cg, name, got[name].Status, got[name].Mechanism, st)
			}
		}
		// The scratch tmpfs is held to the memory budget either way.
		if sc := got[BudgetScratch]; sc.Limit != "256MiB" || !strings.Contains(sc.Mechanism, "HOME, /tmp and /dev/shm") {
			t.Errorf("cgroup %v: scratch %+v; want 256MiB for HOME, /tmp and /dev/shm", cg, sc)
		}
		rl := r.Status(profile.ResourceLimits)
		switch {
		case cg && rl.Status != Enforced:
			t.Errorf("with a cgroup: resource-limits %s (%s); want enforced", rl.Status, rl.Reason)
		case !cg && (rl.Status != Degraded || r.Level == LevelFull || !strings.Contains(rl.Reason, "memory degraded") || !strings.Contains(rl.Reason, "cpu unavailable")):
			t.Errorf("without a cgroup: resource-limits %s (%s), level %s; want degraded naming memory and cpu, level below full", rl.Status, rl.Reason, r.Level)
		}
		if !strings.Contains(r.String(), "max_write") {
			t.Errorf("the Report's text does not list the budgets:\n%s", r)
		}
	}

	// A read-only workspace with no write paths has nothing to bound.
	s.ReadOnlyWorkspace = true
	p, err = profile.New(s)
	if err != nil {
		t.Fatal(err)
	}
	if st := maxWriteStatus(p.Spec()); st.Status != NotApplied {
		t.Errorf("max_write over a read-only workspace: %+v", st)
	}
}

func TestScratchFor(t *testing.T) {
	for _, tc := range []struct {
		b          profile.Budgets
		size       int64
		inodes     int64
		whyContain string
	}{
		{profile.Budgets{Scratch: 1 << 30}, 1 << 30, 1 << 17, "scratch budget"},
		{profile.Budgets{Scratch: 1 << 30, Memory: 256 << 20}, 256 << 20, 1 << 15, "memory budget"},
		{profile.Budgets{Scratch: 4 << 20}, 4 << 20, 1024, "scratch budget"},
		{profile.Budgets{}, halfRAM(), halfRAM() / bytesPerInode, "half of RAM"},
	} {
		got := scratchFor(tc.b)
		if got.size != tc.size || got.inodes != tc.inodes || !strings.Contains(got.why, tc.whyContain) {
			t.Errorf("scratchFor(%+v) = %+v; want size %d, %d inodes, why %q", tc.b, got, tc.size, tc.inodes, tc.whyContain)
		}
	}
}
