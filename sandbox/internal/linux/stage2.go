package linux

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/sandbox/internal/linux/landlock"
	"github.com/airlockhq/airlock/sandbox/internal/linux/seccomp"
)

// Stage2Arg0 is argv[0] of the re-executed binary when it is the stage-2
// helper. The helper is the same binary as the supervisor; the init hook
// below recognises this name and calls Stage2 before main.
const Stage2Arg0 = "airlock-stage2"

// Any program that uses package sandbox re-executes itself as the stage-2
// helper (/proc/self/exe with argv[0] Stage2Arg0). Catching that at init
// means callers need no hook of their own in main. The hook is here, not
// in package sandbox, because Go runs a package's init as soon as its own
// imports are initialised (of the packages ready, the first by import
// path): the helper then skips the init work of the packages it does not
// use (the egress netstack, the Docker client, SQLite, the CLI's). That
// holds only while this package imports nothing that sorts late, such as
// net, path/filepath or os/exec: TestStage2ImportsInitialiseEarly keeps
// it so (88 package inits instead of 136; docs/BENCHMARKS.md).
func init() {
	if len(os.Args) > 0 && os.Args[0] == Stage2Arg0 {
		Stage2()
	}
	if len(os.Args) > 0 && os.Args[0] == GuardProxyArg0 {
		runGuardProxy()
	}
	if len(os.Args) > 0 && os.Args[0] == IDMapHolderArg0 {
		runIDMapHolder()
	}
	if len(os.Args) > 0 && os.Args[0] == SocketMakerArg0 {
		runSocketMaker()
	}
}

// The helper's inherited descriptors.
const (
	configFD = 3 // unix stream socket: the encoded Config (configwire.go) with the run's descriptors, then EOF
	errorFD  = 4 // write end: one line naming the failed step; closed by exec
)

// maxHandoff bounds the descriptors that come with the Config (the
// kernel's own bound on one message, SCM_MAX_FD).
const maxHandoff = 253

// ExecMarker is the byte the helper writes on the error pipe right
// before execve; the pipe then closes on a successful exec.
const ExecMarker = 0

// ExitSetupFailed is the helper's exit status when a setup step failed
// (its message is on the error pipe).
const ExitSetupFailed = 125

// Stage2 runs inside the new user, mount, pid, ipc, uts (and, unless the
// profile shares the host's, network) namespaces. It reads its Config,
// builds the sandbox around itself in the order the process experiences
// it, and execs the command. It never returns.
//
// The order matters: everything that needs privilege inside the namespace
// (mounts, hostname, loopback, the TAP device) comes before Landlock and
// the capability drop; no_new_privs and seccomp come last because the
// filter forbids mount and friends.
func Stage2() {
	// Every step below acts on this thread; execve replaces the process
	// from it, so the Landlock domain and dropped capabilities are the
	// ones the command inherits.
	runtime.LockOSThread()
	// No heap profiling: its sampled allocations map fresh memory, and
	// the runtime's other threads can allocate after the rlimits below
	// (a run under RLIMIT_AS died of "cannot allocate memory" there).
	runtime.MemProfileRate = 0
	sigs := catchSignals()
	unix.CloseOnExec(errorFD)
	// The helper may have been cloned before its run (a warm helper):
	// the run's descriptors come with the config and go where it says,
	// before any step that opens a descriptor of its own could take one
	// of those numbers.
	cfg, err := readConfig()
	fail("read config", err)
	// Next, so no later step can forget one: descriptors the supervisor
	// inherited from its own caller reach only this helper, never the
	// command (see CloseInheritedOnExec).
	fail("inherited descriptors", CloseInheritedOnExec())
	// Into the run's cgroup first, so every later step, and the command,
	// is counted against its budgets.
	fail("cgroup", JoinSelf(cfg.JoinCgroup))

	if cfg.NewCgroupNS {
		fail("cgroup namespace", unix.Unshare(unix.CLONE_NEWCGROUP))
	}
	fail("hostname", unix.Sethostname([]byte(cfg.Hostname)))
	if cfg.LoopbackUp {
		fail("loopback", loopbackUp())
	}
	if cfg.Network != nil {
		fail("network", setupNetwork(cfg.Network))
	}
	fail("mount view", buildMountView(cfg.Mounts, cfg.DenyWatch.readableMasks()))
	fail("deny watch", handOverDenyMounts(cfg.DenyWatch))
	fail("working directory", unix.Chdir(cfg.Dir))
	// The connect notifier's sock_diag socket is made before the main
	// seccomp filter, which refuses netlink sockets other than
	// NETLINK_ROUTE. The connect broker hands the sandbox sockets of the
	// host's network namespace, so it may do so only where no connect
	// the kernel carries out for the sandbox can reach one: Landlock
	// refuses them all (ABI 4), and the broker makes every TCP
	// connection itself.
	diag, brokerTCP := -1, false
	var guard *GuardConfig
	if cfg.Notifier != nil {
		brokerTCP = cfg.Notifier.BrokerTCP && cfg.Landlock.Enabled && landlock.ABI() >= 4
		diag, err = unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
		fail("connect notifier", err)
		if cfg.Notifier.Guard != nil {
			g := *cfg.Notifier.Guard
			g.PrivateDevs = privateDevs(cfg.Mounts, g.Roots)
			g.Rlimits = cfg.Rlimits
			guard = &g
			// The guard proxy is this binary, which lies outside the
			// view: Landlock must let it run (guardproxy.go).
			cfg.Landlock.Read = append(cfg.Landlock.Read, "/proc/self/exe")
			cfg.Landlock.Exec = append(cfg.Landlock.Exec, "/proc/self/exe")
		}
	}
	if cfg.Landlock.Enabled {
		st, err := landlock.Restrict(landlock.Ruleset{
			Rules:             cfg.Landlock.Rules,
			Read:              cfg.Landlock.Read,
			List:              cfg.Landlock.List,
			Write:             cfg.Landlock.Write,
			Exec:              cfg.Landlock.Exec,
			IoctlDev:          cfg.Landlock.IoctlDev,
			ScopeSignals:      cfg.Landlock.ScopeSignals,
			ScopeAbstractUnix: cfg.Landlock.ScopeAbstractUnix,
			DenyTCPConnect:    brokerTCP,
		})
		fail("landlock", err)
		if brokerTCP && !st.Enforces("net-tcp-connect") {
			fail("connect notifier", errors.New("landlock does not refuse TCP connects; the broker would be unsafe"))
		}
	}
	if cfg.PTY != nil {
		fail("terminal", openPTY(cfg.PTY))
	}
	if cfg.NewSession {
		_, err := unix.Setsid()
		fail("new session", err)
	}
	path, err := lookPath(cfg.Argv[0], cfg.Env)
	fail("find command", err)
	fail("drop capabilities", dropCapabilities())
	fail("no_new_privs", unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
	if cfg.Notifier != nil {
		// The broker will hand the command sockets of the host's network
		// namespace, whose interface ioctls describe the host's network.
		prog, err := seccomp.BuildHostSocketIoctls(runtime.GOARCH)
		fail("host socket ioctls", err)
		fail("host socket ioctls", seccomp.Install(prog))
	}
	if cfg.Seccomp {
		prog, err := seccomp.Build(runtime.GOARCH)
		fail("seccomp", err)
		fail("seccomp", seccomp.Install(prog))
		if cfg.ExecGuard {
			prog, err := seccomp.BuildExecGuard(runtime.GOARCH)
			fail("exec guard", err)
			fail("exec guard", seccomp.Install(prog))
		}
	}
	// The notifier is the last filter (no_new_privs lets it in without
	// CAP_SYS_ADMIN). The guard proxy starts just before it: a process
	// with everything the command gets (Landlock domain, credentials,
	// filters, view) but the notifier, which would stop the very calls
	// it carries out for the supervisor.
	if cfg.Notifier != nil {
		proxy := -1
		if guard != nil {
			proxy, err = startGuardProxy(*guard)
			fail("create guard", err)
		}
		listener, err := installNotifier(brokerTCP, cfg.Notifier.ExecWatch, guard != nil)
		fail("connect notifier", err)
		fail("connect notifier", sendNotifier(cfg.Notifier.FD, listener, diag, proxy, brokerTCP))
	}
	// The command runs as the child of an init (init.go), prepared
	// before the limits.
	ini := prepareInit(sigs, cfg.StatusFD)
	ini.ctty = cfg.PTY != nil
	if cfg.PublishFD > 0 {
		serveSockets(cfg.PublishFD)
	}
	// The init runs as the command's user, and below Landlock ABI 8
	// (no thread sync) its runtime threads are outside the Landlock
	// domain. Not dumpable, the command (same uid, no CAP_SYS_PTRACE)
	// can neither ptrace it, read its memory or environment, nor take its
	// descriptors; the command's own execve makes the command dumpable
	// again.
	fail("init", unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0))
	// Limits last: under RLIMIT_AS (the memory budget where no cgroup
	// can be written) the helper's own Go runtime could not map another
	// arena; nothing after this point allocates.
	for _, r := range cfg.Rlimits {
		fail(fmt.Sprintf("rlimit %d", r.Resource),
			unix.Setrlimit(r.Resource, &unix.Rlimit{Cur: r.Value, Max: r.Value}))
	}
	// The marker tells the supervisor the helper got this far: an error
	// pipe that closes without it means the helper died on the way. The
	// init writes it once the command is exec'd.
	ini.run(path, cfg.Argv, cfg.Env)
}

func readConfig() (*Config, error) {
	data, fds, err := receiveConfig(configFD)
	unix.Close(configFD)
	if err != nil {
		return nil, err
	}
	cfg, err := DecodeConfig(data)
	if err != nil {
		closeFDs(fds)
		return nil, err
	}
	if err := placeDescriptors(fds, cfg.Handoff); err != nil {
		return nil, err
	}
	if len(cfg.Argv) == 0 {
		return nil, fmt.Errorf("empty command")
	}
	return cfg, nil
}

// receiveConfig reads the config socket to EOF, with the descriptors
// that come on it (close-on-exec, as every inherited one becomes).
func receiveConfig(fd int) (data []byte, fds []int, err error) {
	buf := make([]byte, 32<<10)
	oob := make([]byte, unix.CmsgSpace(maxHandoff*4))
	for {
		n, oobn, flags, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			closeFDs(fds)
			return nil, nil, err
		}
		if oobn > 0 {
			msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
			if err != nil {
				closeFDs(fds)
				return nil, nil, err
			}
			for i := range msgs {
				got, err := unix.ParseUnixRights(&msgs[i])
				if err != nil {
					closeFDs(fds)
					return nil, nil, err
				}
				fds = append(fds, got...)
			}
		}
		if flags&unix.MSG_CTRUNC != 0 {
			closeFDs(fds)
			return nil, nil, fmt.Errorf("more than %d descriptors", maxHandoff)
		}
		if n == 0 {
			return data, fds, nil
		}
		data = append(data, buf[:n]...)
	}
}

// placeDescriptors moves fds[i] to the number to[i]: first all above
// the highest, so none lands on another that has yet to move. A number
// below 3 (stdin) stays inherited by the command, as exec.Cmd leaves it;
// the others are close-on-exec, as CloseInheritedOnExec makes them.
func placeDescriptors(fds, to []int) error {
	if len(fds) != len(to) {
		closeFDs(fds)
		return fmt.Errorf("%d descriptors came for %d places", len(fds), len(to))
	}
	high := 2
	for _, t := range to {
		if t < 0 {
			closeFDs(fds)
			return fmt.Errorf("descriptor place %d", t)
		}
		high = max(high, t)
	}
	for i, fd := range fds {
		moved, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, high+1)
		unix.Close(fd)
		if err != nil {
			closeFDs(fds[i+1:])
			closeFDs(fds[:i])
			return fmt.Errorf("move descriptor %d: %w", fd, err)
		}
		fds[i] = moved
	}
	for i, fd := range fds {
		flags := unix.O_CLOEXEC
		if to[i] < 3 {
			flags = 0
		}
		err := unix.Dup3(fd, to[i], flags)
		unix.Close(fd)
		if err != nil {
			closeFDs(fds[i+1:])
			return fmt.Errorf("put descriptor at %d: %w", to[i], err)
		}
	}
	return nil
}

// fail reports a failed step on the error pipe and exits; it does nothing
// when err is nil.
func fail(step string, err error) {
	if err == nil {
		return
	}
	msg := step + ": " + err.Error()
	unix.Write(errorFD, []byte(msg))
	os.Exit(ExitSetupFailed)
}
