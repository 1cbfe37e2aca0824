package sandbox

import (
	"bytes"
	"syscall"

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
		_ = unix.Kill(-pgrp, unix.SIGSTOP)
		s.suspend()
		_ = unix.Kill(-pgrp, unix.SIGCONT)
		b = b[i+1:]
	}
	return nil
}

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
