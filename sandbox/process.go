package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/egress"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox/internal/guard"
	"github.com/airlockhq/airlock/sandbox/internal/linux"
)

// Process is one prepared run. Like exec.Cmd it is started once and
// waited for once; Signal and Kill may be called from any goroutine.
type Process struct {
	e       *Executor
	ctx     context.Context
	cmd     Cmd
	plan    *plan
	timeout time.Duration
	maxOut  int64

	// mu orders the lifecycle (Start, Close, cleanup); it is held while
	// Start waits for the helper. live guards what the output copiers,
	// the watchdog, Signal and Kill touch, and is never held while
	// waiting, so none of them can block a failing Start.
	mu       sync.Mutex
	started  bool
	closed   bool
	cg       *linux.Cgroup
	prepared time.Duration // how long Prepare took (Timings.Prepare)
	// helperWait is how long Start waited for the warm helper's clone
	// (Timings.HelperWait).
	helperWait time.Duration
	start      time.Time
	execd      time.Time
	live       sync.Mutex
	child      *helperProc
	killedBy   Status // why the supervisor killed the run, if it did
	// signaledAs is the signal Signal ended the command for, by SIGKILL.
	signaledAs syscall.Signal
	// initStatus is the read end of the init's report of a death by
	// signal (initstatus.go).
	initStatus *os.File
	outN       int64
	outs       [2]*bytes.Buffer
	copiers    sync.WaitGroup
	pipes      []*os.File
	done       chan struct{}
	runID      string
	journal    *runJournal // the end-of-run check's state (protect.go)
	// The state of a terminal the command gets as stdin, put back when
	// the run ends (see terminal.go).
	term *terminalState
	// The supervisor's end of the command's own terminal (pty.go).
	pty *ptyState
	// The run's published ports (publish.go).
	pub *publisher
	// hints watch the command's output for refusals no event reports
	// (hints.go).
	hints, ptyHints *outputHints

	// The egress gateway of a run with network "allow" or "all" (see
	// egress.go); gwMu, not mu, guards gw, since the gateway starts
	// while Start holds mu.
	gwMu   sync.Mutex
	gw     egress.Gateway
	broker *connectBroker
	// guards are the run's guards, in the order they start (guards.go).
	guards      []guard.Run[Denial]
	stderr      io.Writer // the run's stderr, shared with denial lines
	denialLines atomic.Int64

	// The deny watch of a run whose deny entries can match inside its
	// mounts (see denywatch.go).
	deny atomic.Pointer[denyWatch]

	// writes is the write budget's account (writebudget.go); nil
	// without one.
	writes     *writeAccount
	writesOver atomic.Int64 // the growth that ended the run
}

func prepare(ctx context.Context, e *Executor, cmd Cmd) (*Process, error) {
	begin := time.Now()
	pl, err := compile(e.profile, cmd, e.host.CreateGuard && !createGuardOff, e.maskOptions())
	if err != nil {
		return nil, err
	}
	// A profile that requires protected paths does not run where the
	// search for repositories could not cover the writable trees.
	if pl.protect.truncated && e.profile.Required().Has(profile.ProtectedPaths) {
		st := protectedRunStatus(e.report.Status(profile.ProtectedPaths), pl.protect, pl.protect.guarded)
		if st.Status != Enforced {
			return nil, &UnavailableError{Missing: []GuaranteeStatus{st}}
		}
	}
	if e.policy != nil {
		planEgress(pl)
	}
	if e.opts.Grants != nil {
		if err := redeemGrants(e.profile, e.opts.Grants, cmd, pl.config.Dir); err != nil {
			return nil, err
		}
	}
	b := e.profile.Spec().Budgets
	timeout := time.Duration(b.WallTime)
	if cmd.Timeout > 0 && (timeout == 0 || cmd.Timeout < timeout) {
		timeout = cmd.Timeout
	}
	if ctx == nil {
		ctx = context.Background()
	}
	return &Process{e: e, ctx: ctx, cmd: cmd, plan: pl, timeout: timeout, maxOut: int64(b.Output), done: make(chan struct{}), prepared: time.Since(begin)}, nil
}

// Start builds the sandbox and execs the command in it. It returns once
// the command runs, or with a *SetupError naming the step that failed (in
// which case nothing of the command ran and nothing is left behind).
func (p *Process) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started {
		return errors.New("sandbox: Start called twice")
	}
	if p.closed {
		return errors.New("sandbox: Start after Close")
	}
	p.started = true
	p.start = time.Now()
	if err := p.ctx.Err(); err != nil {
		return &SetupError{Step: "start", Err: err}
	}
	err := p.spawn()
	if p.e.opts.KeepWarm {
		// The next run's helper clones while this one runs, not beside
		// its setup, which it would slow.
		p.e.warmUp()
	}
	if err != nil {
		p.cleanupLocked()
		close(p.done)
		// Nothing of the command ran, but the check is cheap and the
		// journal must not outlive the run.
		if _, perr := p.finishProtection(); perr != nil {
			err = errors.Join(err, perr)
		}
	}
	return err
}

func (p *Process) spawn() error {
	s := p.e.profile.Spec()
	b := s.Budgets
	cfg := p.plan.config
	p.runID = randomID()
	if err := p.startProtection(); err != nil {
		return err
	}
	// The Report promises Landlock (and its signal and abstract-socket
	// scopes) whenever the kernel has it; the helper applies it only when
	// told to.
	cfg.Landlock.Enabled = p.e.host.LandlockABI > 0
	if p.e.host.CgroupWritable {
		// The helper is in its cgroup (helper.go) before the run's first
		// step.
		cfg.NewCgroupNS = true
	} else {
		// Without a writable cgroup, rlimits are the (weaker) budget.
		if b.Memory > 0 {
			cfg.Rlimits = append(cfg.Rlimits, linux.Rlimit{Resource: unix.RLIMIT_AS, Value: addressSpaceLimit(b.Memory)})
		}
		if b.Pids > 0 {
			cfg.Rlimits = append(cfg.Rlimits, linux.Rlimit{Resource: unix.RLIMIT_NPROC, Value: uint64(withInit(b.Pids))})
		}
	}
	if err := p.newGuardRuns(); err != nil {
		return err
	}
	// The run's descriptors, in c as exec.Cmd would pass them: the
	// helper puts ExtraFiles[i] at 3+i (Config.Handoff), after its own
	// config socket and error pipe.
	c := &exec.Cmd{Stdin: p.cmd.Stdin, ExtraFiles: make([]*os.File, helperFDs-3)}
	for _, r := range p.guards {
		defer r.Handoff().Parent.Close()
		p.pipes = append(p.pipes, r.Handoff().Child)
		c.ExtraFiles = append(c.ExtraFiles, r.Handoff().Child)
		if err := r.Configure(&cfg, 2+len(c.ExtraFiles)); err != nil {
			return &SetupError{Step: r.Step(), Err: err}
		}
	}

	// The write budget's starting point, before anything of the run can
	// write (a helper cloned earlier writes nothing before its config).
	var err error
	if p.writes, err = newWriteAccount(s); err != nil {
		return &SetupError{Step: "write budget", Err: err}
	}
	trees, err := p.idmapSystemPaths(&cfg, c.ExtraFiles)
	if err != nil {
		return &SetupError{Step: "system paths id-map", Err: err}
	}
	c.ExtraFiles = append(c.ExtraFiles, trees...)
	p.pipes = append(p.pipes, trees...)
	statR, statW, err := openInitStatus()
	if err != nil {
		return &SetupError{Step: "pipe", Err: err}
	}
	p.initStatus = statR
	p.pipes = append(p.pipes, statW)
	c.ExtraFiles = append(c.ExtraFiles, statW)
	cfg.StatusFD = 2 + len(c.ExtraFiles)
	if err := p.preparePublish(&cfg, c, p.e.spec.flags&unix.CLONE_NEWNET != 0); err != nil {
		return err
	}
	if p.cmd.Terminal != nil {
		if err := p.preparePTY(&cfg, c); err != nil {
			return err
		}
	} else if p.term = saveTerminal(p.cmd.Stdin); p.term != nil {
		in, err := p.term.readOnly()
		if err != nil {
			return &SetupError{Step: "stdin", Err: err}
		}
		c.Stdin = in
		p.pipes = append(p.pipes, in)
	}
	stdin, own, err := stdinFile(c.Stdin)
	if err != nil {
		return &SetupError{Step: "stdin", Err: err}
	}
	if own {
		p.pipes = append(p.pipes, stdin)
	}

	// The helper: the warm one if it is usable, else a fresh clone.
	h, waited := p.e.takeHelper()
	p.helperWait = waited
	if h == nil {
		if h, err = newHelper(p.e.spec); err != nil {
			return err
		}
	}
	if err := h.cgroupMade(); err != nil {
		h.discard()
		return err
	}
	h.closeMounts()
	defer h.errR.Close()
	p.cg = h.cg
	p.live.Lock()
	p.child = h.cmd
	p.live.Unlock()
	for i, w := range []io.Writer{p.cmd.Stdout, p.cmd.Stderr} {
		if w == nil {
			p.outs[i] = &bytes.Buffer{}
			w = p.outs[i]
		}
		if i == 1 {
			// The hints watch stderr and say their lines there
			// (hints.go); so do the denial lines, one at a time.
			p.hints = p.newHints(w)
			lw := &lockedWriter{w: p.hints}
			p.stderr, w = lw, lw
		}
		p.copiers.Add(1)
		go p.copyOutput(h.outR[i], w)
	}
	werr := h.send(cfg, stdin, c.ExtraFiles[helperFDs-3:])
	// The helper holds its own copies now.
	for _, f := range p.pipes {
		f.Close()
	}
	p.pipes = nil
	if werr != nil {
		p.reapLocked()
		return werr
	}
	errR := h.errR
	guardErr := p.startGuards()
	msg, _ := io.ReadAll(errR)
	if guardErr != nil {
		p.reapLocked()
		return guardErr
	}
	switch {
	case len(msg) == 0 && p.killedFor(StatusOutputLimitExceeded):
		// The command ran, printed past its budget and was killed before
		// the init could report the exec: a started run, which Wait
		// reports as over its output budget.
	case len(msg) == 0:
		// Neither a message nor the exec marker: the helper died.
		p.reapLocked()
		if st := p.child.ProcessState; st != nil && st.Exited() {
			if step := linux.SpawnStep(st.ExitCode()); step != "" {
				// Before its exec of stage 2 (the spawner, linux.SpawnHelper).
				return &SetupError{Step: "helper", Err: fmt.Errorf("exited at %s, before stage 2 (%v)", step, st)}
			}
		}
		return &SetupError{Step: "helper", Err: fmt.Errorf("exited before running the command (%v)", p.child.ProcessState)}
	case msg[0] != linux.ExecMarker || len(msg) > 1:
		p.reapLocked()
		text := strings.TrimPrefix(string(msg), string(rune(linux.ExecMarker)))
		step, cause, _ := strings.Cut(text, ": ")
		return &SetupError{Step: step, Err: classifyCommandError(step, cause)}
	}
	p.execd = time.Now()
	if p.pty != nil {
		if err := p.startPTY(); err != nil {
			p.reapLocked()
			return err
		}
	}
	p.startPublish()
	if d, ok := p.linksMaskedDenial(); ok {
		p.noteRefusal(d)
	}
	go p.watch()
	p.watchWrites()
	return nil
}

// copyOutput forwards one stream, counting bytes against the budget.
func (p *Process) copyOutput(r io.ReadCloser, w io.Writer) {
	defer p.copiers.Done()
	defer r.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			p.live.Lock()
			keep := n
			if p.maxOut > 0 && p.outN+int64(n) > p.maxOut {
				keep = int(max(p.maxOut-p.outN, 0))
			}
			p.outN += int64(n)
			over := p.maxOut > 0 && p.outN > p.maxOut
			p.live.Unlock()
			if keep > 0 {
				_, _ = w.Write(buf[:keep])
			}
			if over {
				p.kill(StatusOutputLimitExceeded)
			}
		}
		if err != nil {
			return
		}
	}
}

// watch kills the run on timeout or context cancellation.
func (p *Process) watch() {
	var timer <-chan time.Time
	if p.timeout > 0 {
		t := time.NewTimer(p.timeout - time.Since(p.start))
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-p.done:
	case <-timer:
		p.kill(StatusTimedOut)
	case <-p.ctx.Done():
		p.kill(StatusCancelled)
	}
}

// kill ends the whole run: the helper is PID 1 of its pid namespace, so
// SIGKILL to it takes every process of the sandbox with it.
func (p *Process) kill(why Status) {
	p.live.Lock()
	defer p.live.Unlock()
	if p.killedBy == "" {
		p.killedBy = why
	}
	if p.child != nil && p.child.Process != nil {
		_ = p.child.Process.Signal(syscall.SIGKILL)
	}
}

// killedFor reports whether the supervisor has ended the run for why.
func (p *Process) killedFor(why Status) bool {
	p.live.Lock()
	defer p.live.Unlock()
	return p.killedBy == why
}

// Signal sends sig to the command and has the effect it would have on an
// ordinary process: a signal the command handles is delivered; one it
// ignores, or whose default is to be ignored, does nothing; one whose
// default action stops a process stops it; one whose default action ends
// a process ends the command, and the Result names sig as the signal
// that ended it. (The command is PID 1 of the sandbox, which the kernel
// would shield from any signal it has no handler for; see signal.go.)
// Kill ends the whole run instead.
func (p *Process) Signal(sig os.Signal) error {
	p.live.Lock()
	defer p.live.Unlock()
	if p.child == nil || p.child.Process == nil {
		return errors.New("sandbox: process not started")
	}
	s, ok := sig.(syscall.Signal)
	if !ok {
		return p.child.Process.Signal(sig)
	}
	switch effectOf(p.child.Process.Pid, s) {
	case signalNothing:
		return nil
	case signalStop:
		return p.child.Process.Signal(syscall.SIGSTOP)
	case signalTerminate:
		if err := p.child.Process.Signal(syscall.SIGKILL); err != nil {
			return err
		}
		if p.signaledAs == 0 {
			p.signaledAs = s
		}
		return nil
	}
	return p.child.Process.Signal(s)
}

// Kill ends the run and every process in it; Wait reports
// StatusCancelled.
func (p *Process) Kill() error {
	p.live.Lock()
	started := p.child != nil
	p.live.Unlock()
	if !started {
		return errors.New("sandbox: process not started")
	}
	p.kill(StatusCancelled)
	return nil
}

// Close releases a Process that was prepared but never started. After
// Start, Wait does the cleanup and Close is a no-op.
func (p *Process) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	return nil
}

// Wait waits for the command and every process it started to end, removes
// what the run created, and returns the Result. What it does, step by
// step, is endSteps (finish.go).
func (p *Process) Wait() (*Result, error) {
	p.live.Lock()
	c := p.child
	p.live.Unlock()
	if c == nil {
		return nil, errors.New("sandbox: Wait without a successful Start")
	}
	return p.finish(c)
}

// reapLocked kills and waits for a helper whose setup failed.
func (p *Process) reapLocked() {
	if p.child != nil && p.child.Process != nil {
		_ = p.child.Process.Signal(syscall.SIGKILL)
		_ = p.child.Wait()
	}
	p.copiers.Wait()
	if p.initStatus != nil {
		p.initStatus.Close()
		p.initStatus = nil
	}
}

// cleanupLocked puts back the terminal, kills anything left in the run's
// cgroup and removes it.
func (p *Process) cleanupLocked() error {
	p.term.restore()
	p.term = nil
	p.closePTY()
	p.closePublish()
	p.closeGuards()
	for _, f := range p.pipes {
		f.Close()
	}
	p.pipes = nil
	if p.cg == nil {
		return nil
	}
	err := p.cg.Destroy()
	p.cg = nil
	return err
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
