package guard

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// NewHandoff makes a hand-off; name names its ends in /proc/PID/fd.
func NewHandoff(name string) (*Handoff, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return &Handoff{Parent: os.NewFile(uintptr(fds[0]), name+"-handoff"), Child: os.NewFile(uintptr(fds[1]), name+"-handoff-helper")}, nil
}

// RecvRights reads one message of the helper's from a hand-off socket
// (the TAP device, the connect notifier, the deny watch's mounts): its
// one-byte tag and the descriptors it carries (SCM_RIGHTS, at most max,
// close-on-exec). closed reports that the helper's end shut without a
// message. On an error no descriptor is left open.
func RecvRights(sock *os.File, max int) (tag byte, fds []int, closed bool, err error) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4*max))
	n, oobn, flags, _, err := unix.Recvmsg(int(sock.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return 0, nil, false, err
	}
	if n == 0 && oobn == 0 {
		return 0, nil, true, nil
	}
	if oobn > 0 {
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return 0, nil, false, err
		}
		for i := range msgs {
			got, err := unix.ParseUnixRights(&msgs[i])
			fds = append(fds, got...)
			if err != nil {
				CloseAll(fds)
				return 0, nil, false, err
			}
		}
	}
	if flags&unix.MSG_CTRUNC != 0 {
		CloseAll(fds)
		return 0, nil, false, errors.New("descriptors truncated")
	}
	return buf[0], fds, false, nil
}

// RecvOneRight is RecvRights for a message that carries exactly one
// descriptor, or none when none is an answer (ok false).
func RecvOneRight(sock *os.File) (fd int, ok, closed bool, err error) {
	_, fds, closed, err := RecvRights(sock, 1)
	switch {
	case err != nil || closed:
		return -1, false, closed, err
	case len(fds) > 1:
		CloseAll(fds)
		return -1, false, false, fmt.Errorf("want one descriptor, got %d", len(fds))
	case len(fds) == 0:
		return -1, false, false, nil
	}
	return fds[0], true, false, nil
}

// CloseAll closes every descriptor of fds.
func CloseAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}
