package linux

import "golang.org/x/sys/unix"

// Publishing a port (sandbox.Cmd.Publish) needs a socket of the sandbox's
// network namespace, which with --net none holds only lo: the supervisor
// cannot enter it (setns into a network namespace needs CAP_SYS_ADMIN in
// the caller's own user namespace too, which an unprivileged supervisor
// lacks). A socket's namespace is the one it was made in, and a connect
// on it is made there whoever calls it; so the init, which stays in the
// namespace, makes unconnected TCP sockets on request and hands them
// over, and the supervisor connects them to the command's port. The init
// connects nothing itself and never reads what passes.

// Socket requests on the publish socket.
const (
	PublishTCP4 byte = 4
	PublishTCP6 byte = 6
)

// serveSockets answers each request on fd with one new TCP socket (a
// byte 0 and the descriptor) or a byte 1 when the kernel refused one,
// until the supervisor closes its end.
func serveSockets(fd int) {
	go func() {
		buf := make([]byte, 1)
		for {
			n, _, _, _, err := unix.Recvmsg(fd, buf, nil, 0)
			if err == unix.EINTR {
				continue
			}
			if err != nil || n == 0 {
				unix.Close(fd)
				return
			}
			family := unix.AF_INET
			if buf[0] == PublishTCP6 {
				family = unix.AF_INET6
			}
			s, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				_ = unix.Sendmsg(fd, []byte{1}, nil, nil, 0)
				continue
			}
			_ = unix.Sendmsg(fd, []byte{0}, unix.UnixRights(s), nil, 0)
			unix.Close(s)
		}
	}()
}
