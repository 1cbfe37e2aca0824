package linux

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
// imports are initialised: the helper then skips the init work of the
// packages it does not use (profile, regexp, the CLI's), which is a
// quarter of a millisecond of every run's startup.
func init() {
	if len(os.Args) > 0 && os.Args[0] == Stage2Arg0 {
		Stage2()
	}
}

// The helper's inherited descriptors.
const (
	// configFD is the read end of the config pipe: the JSON Config
	// behind its length (4 bytes, little-endian), later one byte once
	// the helper is in the run's cgroup, then EOF.
	configFD = 3
	errorFD  = 4 // write end: one line naming the failed step; closed by exec
)

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
	unix.CloseOnExec(configFD)
	unix.CloseOnExec(errorFD)

	cfg, err := readConfig()
	fail("read config", err)

	fail("hostname", unix.Sethostname([]byte(cfg.Hostname)))
	if cfg.LoopbackUp {
		fail("loopback", loopbackUp())
	}
	if cfg.Network != nil {
		fail("network", setupNetwork(cfg.Network))
	}
	fail("mount view", buildMountView(cfg.Mounts))
	fail("working directory", unix.Chdir(cfg.Dir))
	if cfg.Landlock.Enabled {
		_, err := landlock.Restrict(landlock.Ruleset{
			Read:              cfg.Landlock.Read,
			List:              cfg.Landlock.List,
			Write:             cfg.Landlock.Write,
			Exec:              cfg.Landlock.Exec,
			IoctlDev:          cfg.Landlock.IoctlDev,
			ScopeSignals:      cfg.Landlock.ScopeSignals,
			ScopeAbstractUnix: cfg.Landlock.ScopeAbstractUnix,
		})
		fail("landlock", err)
	}
	// The supervisor moves the helper into the run's cgroup while the
	// steps above run: on cgroup v1 the move waits for an RCU grace
	// period, often several milliseconds. Nothing of the command starts
	// before it is done.
	fail("cgroup", waitPlaced())
	if cfg.NewCgroupNS {
		fail("cgroup namespace", unix.Unshare(unix.CLONE_NEWCGROUP))
	}
	for _, r := range cfg.Rlimits {
		fail(fmt.Sprintf("rlimit %d", r.Resource),
			unix.Setrlimit(r.Resource, &unix.Rlimit{Cur: r.Value, Max: r.Value}))
	}
	if cfg.NewSession {
		_, err := unix.Setsid()
		fail("new session", err)
	}
	path, err := lookPath(cfg.Argv[0], cfg.Env)
	fail("find command", err)
	fail("drop capabilities", dropCapabilities())
	fail("no_new_privs", unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
	if cfg.Seccomp {
		prog, err := seccomp.Build(runtime.GOARCH)
		fail("seccomp", err)
		fail("seccomp", seccomp.Install(prog))
	}
	err = unix.Exec(path, cfg.Argv, cfg.Env)
	fail("exec "+cfg.Argv[0], err)
}

func readConfig() (*Config, error) {
	var size [4]byte
	if err := readFull(configFD, size[:]); err != nil {
		return nil, err
	}
	data := make([]byte, binary.LittleEndian.Uint32(size[:]))
	if err := readFull(configFD, data); err != nil {
		return nil, err
	}
	var cfg Config
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, err
	}
	if len(cfg.Argv) == 0 {
		return nil, fmt.Errorf("empty command")
	}
	return &cfg, nil
}

// waitPlaced blocks until the supervisor's byte on the config pipe says
// the helper is in the run's cgroup (or that the run has none). EOF
// instead means the supervisor gave up or died.
func waitPlaced() error {
	var b [1]byte
	err := readFull(configFD, b[:])
	unix.Close(configFD)
	if err != nil {
		return fmt.Errorf("the supervisor did not confirm the placement: %w", err)
	}
	return nil
}

// readFull fills b from fd. It reads the raw descriptor: an *os.File
// would close it when collected, and the config pipe outlives readConfig.
func readFull(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Read(fd, b)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return err
		case n == 0:
			return io.ErrUnexpectedEOF
		}
		b = b[n:]
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
