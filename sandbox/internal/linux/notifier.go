package linux

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/sandbox/internal/linux/seccomp"
)

// NotifierConfig asks the helper for the connect notifier
// (seccomp.BuildConnectNotifier) in every run: every connect(2) of the
// sandbox then waits for the supervisor, which carries it out itself
// after checking a unix socket's destination, and AF_UNIX datagram
// sockets cannot be made.
type NotifierConfig struct {
	// FD is the inherited unix socket the helper sends the notifier's
	// listener and a NETLINK_SOCK_DIAG socket of the sandbox's network
	// namespace over (one message, SCM_RIGHTS), whose byte is 1 when
	// the notifier brokers TCP too. The supervisor lists the sandbox's
	// own unix sockets through the diag socket.
	FD int `json:"fd"`
	// BrokerTCP asks the notifier to stop listen(2) and refuse TCP Fast
	// Open too, for the egress gateway's connect broker; the helper
	// grants it only where Landlock can refuse TCP connects (ABI 4).
	BrokerTCP bool `json:"broker_tcp,omitempty"`
	// ExecWatch asks the notifier to stop execve and execveat too, which
	// the supervisor answers CONTINUE after noting the ones the exec
	// boundary refuses (sandbox/execwatch.go).
	ExecWatch bool `json:"exec_watch,omitempty"`
}

// installNotifier installs the connect notifier and returns its
// listener. The supervisor asks for it only when its host probe found the
// kernel able; a refusal here (a sandbox around airlock that already has
// a listener: EBUSY) fails the run rather than leave connects unchecked.
func installNotifier(brokerTCP, execWatch bool) (int, error) {
	prog, err := seccomp.BuildConnectNotifier(runtime.GOARCH, seccomp.NotifierOptions{BrokerTCP: brokerTCP, ExecWatch: execWatch})
	if err != nil {
		return -1, err
	}
	return seccomp.InstallNotifier(prog)
}

// sendNotifier sends the listener and a sock_diag socket of this network
// namespace to the supervisor over fd, and closes all three. Once the
// filter is in, a connect blocks until someone answers, so a listener
// that cannot be sent is an error: the helper must not exec.
func sendNotifier(fd, listener int, brokerTCP bool) error {
	defer unix.Close(fd)
	defer unix.Close(listener)
	diag, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return fmt.Errorf("sock_diag socket: %w", err)
	}
	defer unix.Close(diag)
	tag := byte(0)
	if brokerTCP {
		tag = 1
	}
	if err := unix.Sendmsg(fd, []byte{tag}, unix.UnixRights(listener, diag), nil, 0); err != nil {
		return fmt.Errorf("hand the connect notifier to the supervisor: %w", err)
	}
	return nil
}
