package sandbox

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// recvRights reads one message of the helper's from a hand-off socket
// (the TAP device, the connect notifier, the deny watch's mounts): its
// one-byte tag and the descriptors it carries (SCM_RIGHTS, at most max,
// close-on-exec). closed reports that the helper's end shut without a
// message. On an error no descriptor is left open.
func recvRights(sock *os.File, max int) (tag byte, fds []int, closed bool, err error) {
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
				closeAll(fds)
				return 0, nil, false, err
			}
		}
	}
	if flags&unix.MSG_CTRUNC != 0 {
		closeAll(fds)
		return 0, nil, false, errors.New("descriptors truncated")
	}
	return buf[0], fds, false, nil
}

// recvOneRight is recvRights for a message that carries exactly one
// descriptor, or none when none is an answer (ok false).
func recvOneRight(sock *os.File) (fd int, ok, closed bool, err error) {
	_, fds, closed, err := recvRights(sock, 1)
	switch {
	case err != nil || closed:
		return -1, false, closed, err
	case len(fds) > 1:
		closeAll(fds)
		return -1, false, false, fmt.Errorf("want one descriptor, got %d", len(fds))
	case len(fds) == 0:
		return -1, false, false, nil
	}
	return fds[0], true, false, nil
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}
