package sandbox

import (
	"fmt"
	"io"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// terminalState is what a command can change on a terminal it gets as
// its standard input and what would outlive it: the terminal's modes
// (stty raw -echo), exclusive mode (TIOCEXCL, after which no one else
// may open it), and the status flags of the open file, which the
// caller's own process shares (O_NONBLOCK left set breaks the shell
// that reads it next). The command runs in a session of its own, so it
// has no controlling terminal and cannot change the foreground process
// group; the window size is the terminal's, and the caller may resize
// it during the run, so it is left as it is.
type terminalState struct {
	fd      int
	termios unix.Termios
	flags   int
	excl    bool
}

// saveTerminal records the state of stdin when it is a terminal, and
// returns nil otherwise.
func saveTerminal(stdin io.Reader) *terminalState {
	f, ok := stdin.(*os.File)
	if !ok || f == nil {
		return nil
	}
	// Not f.Fd(), which would clear O_NONBLOCK on the caller's file.
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	fd := -1
	rc.Control(func(u uintptr) { fd = int(u) })
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil // not a terminal
	}
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return nil
	}
	excl, err := unix.IoctlGetInt(fd, unix.TIOCGEXCL)
	// A duplicate: the caller may close its own once the run has
	// started, and restore must not touch whatever reuses the number.
	dup, derr := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 3)
	if derr != nil {
		return nil
	}
	return &terminalState{fd: dup, termios: *t, flags: flags, excl: err == nil && excl != 0}
}

// restore puts the terminal back as it was at the start, where the run
// changed it, and releases the duplicate; the command and everything it
// started are gone by then. Errors are ignored: the terminal may be gone
// too (a hung-up session), and there is nothing left to restore then.
func (s *terminalState) restore() {
	if s == nil {
		return
	}
	defer unix.Close(s.fd)
	// An airlock run as a background job of the shell whose terminal is
	// its stdin would be stopped by SIGTTOU at TCSETS. With SIGTTOU
	// blocked on this thread the kernel makes the change, as it does for
	// a shell that ignores the signal.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var ttou, old unix.Sigset_t
	ttou.Val[(unix.SIGTTOU-1)/64] |= 1 << ((uint(unix.SIGTTOU) - 1) % 64)
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &ttou, &old); err == nil {
		defer unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
	}
	// Only what the run changed: the terminal may have a foreground job
	// of its own by now.
	if cur, err := unix.IoctlGetTermios(s.fd, unix.TCGETS); err == nil && *cur != s.termios {
		// TCSETS, not TCSETSW: a terminal whose output the command
		// stopped (IXON and ^S) would never drain.
		_ = unix.IoctlSetTermios(s.fd, unix.TCSETS, &s.termios)
	}
	if cur, err := unix.IoctlGetInt(s.fd, unix.TIOCGEXCL); err == nil && (cur != 0) != s.excl {
		excl := uint(unix.TIOCNXCL)
		if s.excl {
			excl = unix.TIOCEXCL
		}
		_ = unix.IoctlSetInt(s.fd, excl, 0)
	}
	_, _ = unix.FcntlInt(uintptr(s.fd), unix.F_SETFL, s.flags)
}

// readOnly opens the terminal again for reading only, as the command's
// stdin. The caller's descriptor is open for writing too (a shell's
// terminal is), and what the command wrote to its fd 0 would reach the
// user's screen past the output budget (--max-output). On the new open
// file, a write fails with EBADF; reopening it for writing
// (/proc/self/fd/0) is refused by Landlock, since the host's terminal
// lies beneath no path of the view. Its status flags are its own, so an
// O_NONBLOCK the command sets never reaches the caller's file either.
func (s *terminalState) readOnly() (*os.File, error) {
	fd, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", s.fd), unix.O_RDONLY|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open the terminal on stdin again, for reading only: %w (a terminal in exclusive mode, TIOCEXCL, cannot be; give the command another stdin)", err)
	}
	return os.NewFile(uintptr(fd), "terminal (read-only)"), nil
}
