package sandbox

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"

	"github.com/airlockhq/airlock/profile"
)

// The end of a run: what Wait does once the command has been started, as
// one ordered list of named steps instead of code spread through Wait,
// so that what runs, and in which order, is read here, and what each
// step cost is in the Result (Timings.End).

// endStep is one step of the end of a run.
type endStep struct {
	name string // Timings.End's step, and the Report's end_<name>_ns
	run  func(*runEnd)
}

// endSteps are the steps of the end of a run, in the order Wait runs
// them. Every step runs, whatever the one before it found: after a
// failed wait the terminal is still put back, the cgroup removed and the
// end-of-run check made. Why this order:
//
//   - helper: the helper is PID 1 of the run's pid namespace, so once it
//     is reaped every process of the run is gone and nothing of the run
//     can race the steps that follow;
//   - output: the copiers end at the EOF the last writer's exit gives;
//   - guards: every connection of the run ends with its processes; their
//     refusals join the Result. The write budget's watch ends here too;
//   - exit status: the command's exit, or why the supervisor ended it;
//   - cgroup counters: read before the cgroup goes, which takes them;
//   - cleanup: the terminal put back, the pty, published ports and pipes
//     closed, the cgroup removed;
//   - write budget: the account's last count, once nothing writes;
//   - protected paths: the end-of-run check, which may move aside what
//     the run planted, and the removal of placeholders and journal;
//   - result: the Result's status and denials from what the steps found.
var endSteps = []endStep{
	{"helper", (*runEnd).waitHelper},
	{"output", (*runEnd).drainOutput},
	{"guards", (*runEnd).closeGuards},
	{"exit_status", (*runEnd).exitStatus},
	{"cgroup_counters", (*runEnd).cgroupCounters},
	{"cleanup", (*runEnd).cleanup},
	{"write_budget", (*runEnd).writeBudget},
	{"protected_paths", (*runEnd).protectedPaths},
	{"result", (*runEnd).result},
}

// runEnd is what the steps of the end of a run find and pass on.
type runEnd struct {
	p   *Process
	c   *helperProc
	res *Result

	waitErr      error     // the helper's wait, if it failed other than by its exit
	exited       time.Time // every process of the run gone (Timings.Run's end)
	killedBy     Status
	oom, pidsHit int64
	wrote        int64
	guardDenials []Denial
	protDenials  []Denial
	protErr      error
	cleanupErr   error
}

// finish runs the end of a run and returns Wait's result.
func (p *Process) finish(c *helperProc) (*Result, error) {
	e := &runEnd{p: p, c: c, res: &Result{ExitCode: -1, Fingerprint: p.e.profile.Fingerprint(), Budgets: p.e.report.Budgets, Silent: p.e.report.Silent}}
	steps := make([]EndStep, 0, len(endSteps))
	last := time.Now()
	for _, s := range endSteps {
		s.run(e)
		now := time.Now()
		steps = append(steps, EndStep{Step: s.name, Duration: now.Sub(last)})
		last = now
	}
	res := e.res
	res.Timings = Timings{Prepare: p.prepared, Setup: p.execd.Sub(p.start), HelperWait: p.helperWait, Run: e.exited.Sub(p.execd), Total: last.Sub(p.start), End: steps}
	switch {
	case e.waitErr != nil:
		return nil, errors.Join(fmt.Errorf("sandbox: wait: %w", e.waitErr), e.protErr, e.cleanupErr)
	case e.protErr != nil:
		return res, errors.Join(e.protErr, e.cleanupErr)
	}
	return res, e.cleanupErr
}

func (e *runEnd) waitHelper() {
	err := e.c.Wait()
	e.exited = time.Now()
	var ee *exec.ExitError
	switch {
	case err == nil:
		e.res.ExitCode = 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			e.res.Signal = ws.Signal().String()
		} else {
			e.res.ExitCode = ee.ExitCode()
		}
	default:
		e.waitErr = err
	}
}

func (e *runEnd) drainOutput() { e.p.copiers.Wait() }

func (e *runEnd) closeGuards() {
	e.guardDenials = e.p.closeGuards()
	close(e.p.done)
}

func (e *runEnd) exitStatus() {
	p, res := e.p, e.res
	res.Guarantees, res.Level = p.runGuarantees()
	if p.pub != nil {
		res.Published = p.pub.ports
	}
	applyInitStatus(p.initStatus, res)
	p.live.Lock()
	e.killedBy = p.killedBy
	res.OutputBytes = p.outN
	if p.signaledAs != 0 && res.Signal == syscall.SIGKILL.String() {
		res.Signal = p.signaledAs.String()
	}
	p.live.Unlock()
}

func (e *runEnd) cgroupCounters() {
	p := e.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cg != nil {
		e.oom, e.pidsHit = p.cg.OOMKills(), p.cg.PidsLimitHits()
		e.res.Limits = map[string]float64{"memory_peak_bytes": float64(p.cg.PeakMemory())}
	}
}

func (e *runEnd) cleanup() {
	p := e.p
	p.mu.Lock()
	defer p.mu.Unlock()
	e.cleanupErr = p.cleanupLocked()
}

func (e *runEnd) writeBudget() { e.wrote = e.p.finishWrites(e.res) }

func (e *runEnd) protectedPaths() {
	// Every process of the run is gone: nothing can race the check.
	e.protDenials, e.protErr = e.p.finishProtection()
}

func (e *runEnd) result() {
	p, res := e.p, e.res
	b := p.e.profile.Spec().Budgets
	res.Denials = append(res.Denials, e.protDenials...)
	res.Denials = append(res.Denials, e.guardDenials...)
	if d, ok := p.linksMaskedDenial(); ok {
		res.Denials = append(res.Denials, d)
	}
	// The hints' lines were said as they happened; their denials go to
	// the Result with the sandbox's own.
	res.Denials = append(res.Denials, p.hints.denials()...)
	res.Denials = append(res.Denials, p.ptyHints.denials()...)
	if p.outs[0] != nil {
		res.Stdout = p.outs[0].Bytes()
	}
	if p.outs[1] != nil {
		res.Stderr = p.outs[1].Bytes()
	}
	writeBudget, wrote, oom, pidsHit := int64(b.MaxWrite), e.wrote, e.oom, e.pidsHit
	switch {
	case e.killedBy == StatusTimedOut:
		res.Status = StatusTimedOut
		res.Denials = append(res.Denials, Denial{Kind: "timeout", Target: p.timeout.String(), Reason: "wall-clock budget reached"})
	case e.killedBy == StatusOutputLimitExceeded:
		res.Status = StatusOutputLimitExceeded
		res.Denials = append(res.Denials, Denial{Kind: "output", Target: profile.Size(p.maxOut).String(), Reason: "output budget exceeded"})
	case e.killedBy == StatusCancelled:
		res.Status = StatusCancelled
	case writeBudget > 0 && (e.killedBy == StatusLimitExceeded || wrote > writeBudget):
		res.Status = StatusLimitExceeded
		res.Denials = append(res.Denials, writeDenial(writeBudget, "exceeded: "+p.writes.grewBy(wrote)))
	case writeBudget > 0 && res.Signal == syscall.SIGXFSZ.String():
		res.Status = StatusLimitExceeded
		res.Denials = append(res.Denials, writeDenial(writeBudget, "reached by one file (RLIMIT_FSIZE, SIGXFSZ)"))
	case oom > 0 && res.ExitCode != 0:
		res.Status = StatusKilledOOM
		res.Denials = append(res.Denials, Denial{Kind: "memory", Target: b.Memory.String(), Reason: "memory budget exceeded; the OOM killer ended a process"})
	case pidsHit > 0 && res.ExitCode != 0:
		res.Status = StatusLimitExceeded
		res.Denials = append(res.Denials, Denial{Kind: "pids", Target: fmt.Sprint(b.Pids), Reason: fmt.Sprintf("process budget reached; %d forks refused", pidsHit)})
	case res.ExitCode == 0:
		res.Status = StatusSucceeded
	default:
		res.Status = StatusFailed
	}
	// A budget the kernel enforced is recorded even when the command
	// coped with it (a refused fork it retried, an OOM-killed child).
	if res.Status != StatusLimitExceeded && pidsHit > 0 {
		res.Denials = append(res.Denials, Denial{Kind: "pids", Target: fmt.Sprint(b.Pids), Reason: fmt.Sprintf("process budget reached; %d forks refused", pidsHit)})
	}
	if res.Status != StatusLimitExceeded && writeBudget > 0 && wrote >= writeBudget {
		res.Denials = append(res.Denials, writeDenial(writeBudget, "reached: "+p.writes.grewBy(wrote)))
	}
	if res.Status != StatusKilledOOM && oom > 0 {
		res.Denials = append(res.Denials, Denial{Kind: "memory", Target: b.Memory.String(), Reason: fmt.Sprintf("memory budget reached; the OOM killer ended %d process(es)", oom)})
	}
	if e.protErr != nil {
		// The workspace may hold what the run planted: never a success.
		res.Status = StatusFailed
		res.Denials = append(res.Denials, Denial{Kind: "filesystem", Target: p.e.profile.Workspace(), Reason: e.protErr.Error()})
	}
}
