package linux

import (
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// The stage-2 helper is PID 1 of the sandbox's pid namespace, and the
// kernel shields a namespace's PID 1 from every signal it has no handler
// for: a command exec'd in its place would ignore "kill -TERM $$", and an
// abort() would end in SIGSEGV (glibc's last resort when SIGABRT does not
// kill) instead of SIGABRT. So the helper stays as a minimal init, as
// docker --init and bwrap do: the command runs as its child with ordinary
// signal semantics, the init forwards the signals it receives to it, reaps
// every orphan, and when the command ends it reports how and exits, which
// ends every other process of the namespace.

// initState is what the init prepares before the rlimits: under RLIMIT_AS
// (the memory budget where no cgroup can be written) the Go runtime could
// not map a new arena, so everything that allocates much comes first.
type initState struct {
	sigs     chan os.Signal
	statusFD int
	// ctty makes the command the session leader of its pty, the
	// terminal on its stdin, as a login shell is of its terminal: job
	// control, ^C and ^Z work as outside (pty.go).
	ctty bool
}

// caughtSignals is every signal the init catches, so none reaches the
// init's default action and each can be forwarded once the command runs.
type caughtSignals struct {
	ch    chan os.Signal
	ready chan struct{}
}

// catchSignals starts catching every signal and returns at once.
// signal.Notify hands each of the 60-odd signals to the runtime's
// signal-mask thread and waits for it, two thread wake-ups per signal:
// 0.5 ms on an idle machine, several under load, all of it on the run's
// critical path when it ran just before the command's fork. Started
// first in the helper, it overlaps the helper's waits (the config, the
// deny watch's hand-over) and its mount syscalls; prepareInit waits for
// it. A signal that arrives meanwhile is queued for the command, not
// lost.
func catchSignals() *caughtSignals {
	c := &caughtSignals{ch: make(chan os.Signal, 64), ready: make(chan struct{})}
	go func() {
		signal.Notify(c.ch)
		close(c.ready)
	}()
	return c
}

// prepareInit waits until every signal is caught (catchSignals).
func prepareInit(sigs *caughtSignals, statusFD int) *initState {
	<-sigs.ready
	return &initState{sigs: sigs.ch, statusFD: statusFD}
}

// run starts the command as the init's child and never returns. An exec
// that fails is a setup failure, reported on the error pipe as before;
// otherwise the init writes the exec marker there and closes it, so the
// supervisor sees the same protocol as when the helper exec'd itself.
func (st *initState) run(path string, argv, env []string) {
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   env,
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setsid: st.ctty, Setctty: st.ctty, Ctty: 0},
	})
	fail("exec "+argv[0], err)
	unix.Write(errorFD, []byte{ExecMarker})
	unix.Close(errorFD)
	// The command has its own copies of stdin, stdout and stderr; the
	// init's would keep the supervisor's output pipes open after the
	// command's end if an orphan held them, so they go.
	for fd := 0; fd <= 2; fd++ {
		unix.Close(fd)
	}
	for sig := range st.sigs {
		s, ok := sig.(syscall.Signal)
		if !ok {
			continue
		}
		switch s {
		case syscall.SIGCHLD:
			st.reap(pid)
		case syscall.SIGURG:
			// The Go runtime's own preemption signal, not the caller's.
		default:
			_ = unix.Kill(pid, s)
		}
	}
}

// reap collects every child that has ended; when the command is among
// them, the init reports and exits.
func (st *initState) reap(cmd int) {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG|unix.WUNTRACED, nil)
		if pid <= 0 || err != nil {
			return
		}
		if pid == cmd && ws.Stopped() {
			st.resume(cmd)
			continue
		}
		if pid == cmd {
			st.exit(ws)
		}
	}
}

// resume continues the command, which a SIGSTOP stopped (the suspend
// keys and SIGTSTP do not stop it: its process group is orphaned, the
// init's session being another, and the kernel drops them). No shell in
// the sandbox would ever continue it, so the run would stay stopped
// until its wall-clock budget, and with none, for ever: it goes on at
// once, as if it ignored the signal. The supervisor's own hold
// (sandbox/suspend.go) stops the init before the command and continues
// it after, so the init never finds the command stopped then (a
// continued child is not reported). With a terminal the command leads
// its process group, which goes on with it.
func (st *initState) resume(cmd int) {
	if st.ctty {
		_ = unix.Kill(-cmd, unix.SIGCONT)
		return
	}
	_ = unix.Kill(cmd, unix.SIGCONT)
}

// exit ends the init as the command ended. A PID 1 cannot die of a signal
// it sends itself, so a command killed by signal N is reported on the
// status pipe ("signal N", which the supervisor's Result shows) and the
// init exits 128+N, what a shell and docker --init report for it.
func (st *initState) exit(ws unix.WaitStatus) {
	if ws.Signaled() {
		if st.statusFD > 0 {
			unix.Write(st.statusFD, []byte("signal "+strconv.Itoa(int(ws.Signal()))))
		}
		os.Exit(128 + int(ws.Signal()))
	}
	os.Exit(ws.ExitStatus())
}
