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
	// Guard, when set, also stops the calls that make names, chmod and
	// chown, and starts the guard proxy that carries them out
	// (guardproxy.go); its socket follows the diag socket.
	Guard *GuardConfig `json:"guard,omitempty"`
}

// installNotifier installs the connect notifier and returns its
// listener. The supervisor asks for it only when its host probe found the
// kernel able; a refusal here (a sandbox around airlock that already has
// a listener: EBUSY) fails the run rather than leave connects unchecked.
func installNotifier(brokerTCP, execWatch, guard bool) (int, error) {
	prog, err := seccomp.BuildConnectNotifier(runtime.GOARCH, seccomp.NotifierOptions{BrokerTCP: brokerTCP, ExecWatch: execWatch, CreateGuard: guard})
	if err != nil {
		return -1, err
	}
	return seccomp.InstallNotifier(prog)
}

// Tag bits of the notifier's hand-off message.
const (
	NotifierTagBrokerTCP = 1 << iota
	NotifierTagGuard
)

// sendNotifier sends the listener, the sock_diag socket of this network
// namespace and the guard proxy's socket (if any, else -1) to the
// supervisor over fd, and closes them all. Once the filter is in, a
// connect blocks until someone answers, so a listener that cannot be
// sent is an error: the helper must not exec.
func sendNotifier(fd, listener, diag, proxy int, brokerTCP bool) error {
	defer unix.Close(fd)
	defer unix.Close(listener)
	defer unix.Close(diag)
	tag := byte(0)
	if brokerTCP {
		tag |= NotifierTagBrokerTCP
	}
	fds := []int{listener, diag}
	if proxy >= 0 {
		defer unix.Close(proxy)
		tag |= NotifierTagGuard
		fds = append(fds, proxy)
	}
	if err := unix.Sendmsg(fd, []byte{tag}, unix.UnixRights(fds...), nil, 0); err != nil {
		return fmt.Errorf("hand the connect notifier to the supervisor: %w", err)
	}
	return nil
}

// privateDevs are the filesystems of the view only the sandbox sees: the
// scratch tmpfs (HOME, /tmp, /dev/shm) and the /dev tmpfs. Only a tmpfs
// counts, and never the filesystem of a writable tree (roots): a write
// path bound over /tmp is the host's.
func privateDevs(mounts []Mount, roots [][2]uint64) []uint64 {
	var out []uint64
	paths := []string{"/dev"}
	for _, m := range mounts {
		if m.Kind == MountScratch {
			paths = append(paths, m.Target)
		}
	}
	for _, p := range paths {
		var st unix.Stat_t
		var fs unix.Statfs_t
		if unix.Stat(p, &st) != nil || unix.Statfs(p, &fs) != nil || fs.Type != unix.TMPFS_MAGIC {
			continue
		}
		shared := false
		for _, r := range roots {
			shared = shared || r[0] == st.Dev
		}
		if !shared {
			out = append(out, st.Dev)
		}
	}
	return out
}
