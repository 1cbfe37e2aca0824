package linux

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// PTYConfig asks the helper for a terminal of the command's own: a pty of
// the sandbox's devpts instance (the view's /dev/pts), whose slave becomes
// the command's stdin, stdout and stderr and its controlling terminal,
// and whose master goes to the supervisor over the socket at FD. The
// caller's own terminal never enters the sandbox: the supervisor copies
// between it and the master, so a TIOCSTI (refused by seccomp anyway) or
// a write on the slave reaches only this pty, and all output passes the
// supervisor's output budget.
type PTYConfig struct {
	FD   int    `json:"fd"` // a unix socket to send the master on
	Rows uint16 `json:"rows,omitempty"`
	Cols uint16 `json:"cols,omitempty"`
}

// openPTY makes the pty, hands the master over, and puts the slave on
// descriptors 0, 1 and 2. Opened after Landlock, it is reached through
// the view's /dev/pts, which the ruleset grants; the slave is opened from
// the master (TIOCGPTPEER), so no path lookup can swap another in.
func openPTY(c *PTYConfig) error {
	master, err := unix.Open("/dev/pts/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open /dev/pts/ptmx: %w", err)
	}
	defer unix.Close(master)
	if err := unix.IoctlSetPointerInt(master, unix.TIOCSPTLCK, 0); err != nil {
		return fmt.Errorf("unlock the pty: %w", err)
	}
	r, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(master), unix.TIOCGPTPEER, uintptr(unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC))
	if errno != 0 {
		return fmt.Errorf("open the pty's slave (TIOCGPTPEER, Linux 4.13): %w", errno)
	}
	slave := int(r)
	defer unix.Close(slave)
	if c.Rows > 0 && c.Cols > 0 {
		if err := unix.IoctlSetWinsize(slave, unix.TIOCSWINSZ, &unix.Winsize{Row: c.Rows, Col: c.Cols}); err != nil {
			return fmt.Errorf("set the window size: %w", err)
		}
	}
	if err := unix.Sendmsg(c.FD, []byte{'m'}, unix.UnixRights(master), nil, 0); err != nil {
		return fmt.Errorf("send the pty to the supervisor: %w", err)
	}
	unix.Close(c.FD)
	for fd := 0; fd <= 2; fd++ {
		if err := unix.Dup2(slave, fd); err != nil {
			return fmt.Errorf("put the pty on descriptor %d: %w", fd, err)
		}
	}
	return nil
}

// ReceivePTY reads the master the helper sent on sock.
func ReceivePTY(sock int) (int, error) {
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(sock, buf, oob, unix.MSG_DONTWAIT|unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("receive the pty from the helper: %w", err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return -1, errors.New("receive the pty from the helper: no descriptor came")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return -1, errors.New("receive the pty from the helper: no descriptor came")
	}
	return fds[0], nil
}
