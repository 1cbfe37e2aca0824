package sandbox

import (
	"bytes"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// write passes what the user typed to the master, suspending the run
// at each suspend key the command itself would miss (suspendAt).
func (s *ptyState) write(b []byte) error {
	for len(b) > 0 {
		i, pgrp := s.suspendAt(b)
		if i < 0 {
			_, err := s.master.Write(b)
			return err
		}
		if _, err := s.master.Write(b[:i]); err != nil {
			return err
		}
		// The key itself is not passed on: the line discipline would
		// send SIGTSTP to an orphaned group, which the kernel drops.
		s.hold(pgrp)
		s.suspend()
		s.release(pgrp)
		b = b[i+1:]
	}
	return nil
}

// initStopWithin bounds how long hold waits for the init to stop. It
// stops at once unless the host is starved; past it, hold goes on, and
// the worst that can follow is the init continuing the command, which
// then runs on while the supervisor is suspended: never a run that
// cannot end.
const initStopWithin = 2 * time.Second

// hold stops the command's process group while the supervisor is
// suspended. The init continues a stopped command (init.go: nothing in
// the sandbox could, so a SIGSTOP would otherwise hold the run until its
// wall-clock budget), so the init is stopped first, and waited for: a
// SIGSTOP from outside its namespace stops even a namespace's PID 1. A
// stopped run still ends as any run: SIGKILL (Kill, the timeout, the
// output budget) ends stopped processes too, and the init's end ends the
// rest of its namespace.
func (s *ptyState) hold(pgrp int) {
	if s.init != nil && s.init.Signal(syscall.SIGSTOP) == nil {
		waitStopped(s.init.Pid, initStopWithin)
	}
	_ = unix.Kill(-pgrp, unix.SIGSTOP)
}

// release undoes hold in the other order: the command's group goes on
// before the init, so the init, once continued, no longer finds it
// stopped (a continued child is not reported stopped) and leaves it be.
func (s *ptyState) release(pgrp int) {
	_ = unix.Kill(-pgrp, unix.SIGCONT)
	if s.init != nil {
		_ = s.init.Signal(syscall.SIGCONT)
	}
}

// waitStopped waits, at most within, until pid, a child of this process,
// has stopped: every thread of it, which is when the kernel reports the
// stop to its parent. WNOWAIT leaves the report for its real waiter.
func waitStopped(pid int, within time.Duration) {
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(time.Millisecond) {
		var info unix.Siginfo
		if err := unix.Waitid(unix.P_PID, pid, &info, unix.WSTOPPED|unix.WNOWAIT|unix.WNOHANG, nil); err != nil {
			return
		}
		if info.Signo == int32(unix.SIGCHLD) && info.Code == cldStopped {
			return
		}
	}
}

// cldStopped is CLD_STOPPED, a waitid report's si_code for a child that
// stopped (x/sys/unix has no name for it).
const cldStopped = 5

// suspendAt is where in b the first suspend key is that the run must act
// on, and the process group it stops, or -1: the pty's line discipline
// makes signals (ISIG) and has a suspend key (VSUSP), the foreground
// process group is the session leader's own (the command, started in a
// session of its own by the init; a shell's job has a group of its own
// and its shell stops and resumes it), and the command leaves SIGTSTP at
// its default action, so the key would stop it outside (a program that
// catches or ignores it, as a shell or an editor in raw mode does, gets
// the key as before).
func (s *ptyState) suspendAt(b []byte) (int, int) {
	if s.suspend == nil {
		return -1, 0
	}
	fd := int(s.master.Fd())
	tio, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil || tio.Lflag&unix.ISIG == 0 || tio.Cc[unix.VSUSP] == 0 {
		return -1, 0
	}
	i := bytes.IndexByte(b, tio.Cc[unix.VSUSP])
	if i < 0 {
		return -1, 0
	}
	pgrp, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	if err != nil || pgrp <= 0 {
		return -1, 0
	}
	sid, err := unix.IoctlGetInt(fd, unix.TIOCGSID)
	if err != nil || sid != pgrp {
		return -1, 0
	}
	if effectOf(pgrp, syscall.SIGTSTP) != signalStop {
		return -1, 0
	}
	return i, pgrp
}
