package sandbox

import (
	"fmt"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox/internal/linux"
)

// Budget names in a Report, as the profile's budgets keys spell them.
const (
	BudgetMemory   = "memory"
	BudgetPids     = "pids"
	BudgetCPU      = "cpu"
	BudgetWallTime = "wall_time"
	BudgetOutput   = "output"
	BudgetScratch  = "scratch"
	BudgetMaxWrite = "max_write"
)

// BudgetStatus says what bounds one budget on this host.
type BudgetStatus struct {
	Budget string `json:"budget"` // BudgetMemory, ...
	// Limit is the bound in force, in the profile's units ("256MiB",
	// "128", "1.5", "30s"); empty when there is none.
	Limit     string      `json:"limit,omitempty"`
	Status    Enforcement `json:"status"`
	Mechanism string      `json:"mechanism,omitempty"`
	Reason    string      `json:"reason,omitempty"`
}

// scratchBound is the size of the one tmpfs behind the private HOME,
// /tmp and /dev/shm.
type scratchBound struct {
	size, inodes int64
	why          string // what set the size
}

// bytesPerInode: one inode per 8 KiB of scratch. An inode and its dentry
// cost about 1 KiB of kernel memory that the tmpfs size does not count,
// so the inodes add at most an eighth to it.
const bytesPerInode = 8 << 10

// scratchFor is the scratch budget, held to the memory budget: tmpfs
// pages are memory, and without a memory cgroup RLIMIT_AS never sees
// them. Without a scratch budget it is the kernel's own default for a
// tmpfs, half of RAM, but once for all three paths.
func scratchFor(b profile.Budgets) scratchBound {
	sb := scratchBound{size: int64(b.Scratch), why: "the scratch budget"}
	if sb.size == 0 {
		sb.size, sb.why = halfRAM(), "no scratch budget: half of RAM, the kernel's default for a tmpfs"
	}
	if b.Memory > 0 && int64(b.Memory) < sb.size {
		sb.size, sb.why = int64(b.Memory), "held to the memory budget"
	}
	sb.inodes = max(sb.size/bytesPerInode, 1024)
	return sb
}

func (sb scratchBound) mount(dir, target string, mode uint32) linux.Mount {
	return linux.Mount{Kind: linux.MountScratch, Source: dir, Target: target, Size: sb.size, Inodes: sb.inodes, Mode: mode}
}

func halfRAM() int64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil || si.Totalram == 0 {
		return 1 << 30
	}
	return int64(si.Totalram) * int64(si.Unit) / 2
}

// budgetStatuses says what bounds each budget of s on host h.
func budgetStatuses(s profile.Spec, h HostInfo) []BudgetStatus {
	b := s.Budgets
	cg := h.CgroupWritable
	// The cgroup's reason is in the resource-limits line.
	noCgroup := "no writable cgroup (nor a delegated one above this process's)"
	var out []BudgetStatus
	add := func(name, limit string, st Enforcement, mech, why string) {
		out = append(out, BudgetStatus{Budget: name, Limit: limit, Status: st, Mechanism: mech, Reason: why})
	}
	switch {
	case b.Memory == 0:
		add(BudgetMemory, "", NotApplied, "", "no memory budget")
	case cg:
		add(BudgetMemory, b.Memory.String(), Enforced, "cgroup "+h.CgroupMode+" memory limit, no swap; the scratch tmpfs pages are charged to it too"+delegatedNote(h), "")
	default:
		add(BudgetMemory, b.Memory.String(), Degraded, "RLIMIT_AS per process; the scratch tmpfs is held to the budget by its size",
			noCgroup+"; "+addressSpaceNote(b.Memory)+"; each process may map up to that limit, so several together can hold more")
	}
	switch {
	case b.Pids == 0:
		add(BudgetPids, "", NotApplied, "", "no pids budget")
	case cg:
		add(BudgetPids, fmt.Sprint(b.Pids), Enforced, "cgroup "+h.CgroupMode+" pids limit", "")
	default:
		add(BudgetPids, fmt.Sprint(b.Pids), Degraded, "RLIMIT_NPROC", noCgroup+"; a fork past it fails, and the Result cannot count the refusals")
	}
	switch {
	case b.CPU == 0:
		add(BudgetCPU, "", NotApplied, "", "no cpu budget")
	case cg:
		add(BudgetCPU, fmt.Sprint(b.CPU), Enforced, "cgroup "+h.CgroupMode+" cpu quota", "")
	default:
		add(BudgetCPU, fmt.Sprint(b.CPU), Unavailable, "", noCgroup+"; no rlimit bounds cpu use per second")
	}
	if b.WallTime == 0 {
		add(BudgetWallTime, "", NotApplied, "", "no wall-time budget")
	} else {
		add(BudgetWallTime, time.Duration(b.WallTime).String(), Enforced, "supervisor timer; SIGKILL to the pid namespace", "")
	}
	if b.Output == 0 {
		add(BudgetOutput, "", NotApplied, "", "no output budget")
	} else {
		add(BudgetOutput, b.Output.String(), Enforced, "supervisor counts stdout+stderr; SIGKILL past it", "")
	}
	sc := scratchFor(b)
	mech := fmt.Sprintf("one tmpfs for HOME, /tmp and /dev/shm: size %s, %d inodes (%s)", profile.Size(sc.size), sc.inodes, sc.why)
	if cg && b.Memory > 0 {
		mech += "; its pages also count against the memory cgroup"
	}
	add(BudgetScratch, profile.Size(sc.size).String(), Enforced, mech, "")
	out = append(out, maxWriteStatus(s))
	return out
}

// resourceLimitsStatus sums up the budgets as the resource-limits
// guarantee: enforced when every budget the profile sets is, degraded
// (naming the weaker ones) otherwise.
func resourceLimitsStatus(s profile.Spec, budgets []BudgetStatus, h HostInfo) GuaranteeStatus {
	b := s.Budgets
	g := GuaranteeStatus{Guarantee: profile.ResourceLimits}
	if b.Memory == 0 && b.Pids == 0 && b.CPU == 0 && b.MaxWrite == 0 {
		g.Status, g.Reason = NotApplied, "the profile sets no memory, pids, cpu or write budget"
		return g
	}
	var weak []string
	for _, st := range budgets {
		if st.Status == Degraded || st.Status == Unavailable {
			weak = append(weak, fmt.Sprintf("%s %s", st.Budget, st.Status))
		}
	}
	if h.CgroupWritable {
		g.Mechanism = "cgroup " + h.CgroupMode + " memory,pids,cpu + rlimits"
	} else {
		g.Mechanism = "rlimits (RLIMIT_AS, RLIMIT_NPROC)"
	}
	if b.MaxWrite > 0 {
		g.Mechanism += " + supervisor write accounting"
	}
	g.Mechanism += " + bounded scratch tmpfs"
	if len(weak) == 0 {
		g.Status = Enforced
		return g
	}
	g.Status = Degraded
	g.Reason = strings.Join(weak, ", ")
	if !h.CgroupWritable {
		g.Reason += " (" + h.CgroupReason + ")"
	}
	return g
}

// delegatedNote names the delegated cgroups the runs' cgroups are made in.
func delegatedNote(h HostInfo) string {
	if len(h.CgroupDelegated) == 0 {
		return ""
	}
	return "; in the delegated cgroup " + strings.Join(h.CgroupDelegated, ", ")
}
