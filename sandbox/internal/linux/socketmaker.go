package linux

import (
	"os"

	"golang.org/x/sys/unix"
)

// The socket maker makes the host TCP sockets the connect broker hands
// the sandbox. The kernel charges a socket's buffers to the memory
// cgroup of the process that made it: made by the supervisor, what the
// command queued on them (megabytes a socket) was charged to no budget
// of the run. The maker is moved into the run's cgroup before it makes
// any, and lives in the supervisor's network namespace, where the broker
// connects.

// SocketMakerArg0 is argv[0] of the socket maker. Its fd 3 is a
// SOCK_SEQPACKET socket: each message is one byte, the address family
// (AF_INET or AF_INET6); each answer carries the new socket
// (non-blocking, close-on-exec) or none, with the errno as its byte.
const SocketMakerArg0 = "airlock-socketmaker"

func runSocketMaker() {
	const conn = 3
	var req [1]byte
	for {
		n, err := unix.Read(conn, req[:])
		if n != 1 || err != nil {
			os.Exit(0)
		}
		s, err := unix.Socket(int(req[0]), unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
		if err != nil {
			errno, _ := err.(unix.Errno)
			if unix.Sendmsg(conn, []byte{byte(errno)}, nil, nil, 0) != nil {
				os.Exit(0)
			}
			continue
		}
		err = unix.Sendmsg(conn, []byte{0}, unix.UnixRights(s), nil, 0)
		unix.Close(s)
		if err != nil {
			os.Exit(0)
		}
	}
}
