package landlock

import (
	"errors"
	"fmt"
	"path"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrUnavailable is wrapped by Restrict when the kernel has no Landlock:
// built without CONFIG_SECURITY_LANDLOCK, or not listed in the lsm= boot
// parameter.
var ErrUnavailable = errors.New("not available on this kernel (needs Linux 5.13 or later, built with CONFIG_SECURITY_LANDLOCK and with landlock in the lsm= boot parameter)")

// Ruleset says what a sandboxed command may do once restricted. Its zero
// value grants nothing: no file may be read, written or executed, and no
// device ioctl is allowed (on kernels that can restrict them).
//
// Every path must be absolute. A path that does not exist is skipped and
// reported in Status.Skipped; that only ever removes access. Rights apply
// to the path and everything beneath it; a path that is not a directory
// receives only the rights that make sense on a file.
type Ruleset struct {
	// Read allows reading files and listing directories beneath each path.
	Read []string
	// List allows only listing directories beneath each path (READ_DIR),
	// not reading any file: for "/" of a mount view, so "ls /" works
	// without widening what files can be read.
	List []string
	// Write allows everything Read does plus writing, truncating, removing,
	// renaming and linking, and creating files, directories, symlinks,
	// sockets and FIFOs beneath each path. Creating device nodes is never
	// allowed.
	Write []string
	// Exec allows executing files beneath each path. The kernel also needs
	// read access to an executable's shared libraries and its interpreter,
	// and to the file itself for scripts, so these usually appear in Read
	// too.
	Exec []string
	// IoctlDev allows ioctl(2) on character and block devices beneath each
	// path (for example /dev/tty, /dev/pts). Opening the device still
	// needs Read or Write. On ABI 5 and later every other device refuses
	// ioctls with EACCES, apart from a few the kernel always allows
	// (FIOCLEX, FIONBIO and the like).
	IoctlDev []string
	// Types says, for paths of the lists above, what the planner found
	// there (see Rule.Type); a path not in it is TypeUnknown.
	Types map[string]FileType
	// Rules are rules planned beforehand, by Ruleset.Compile of another
	// Ruleset (the supervisor's, for the stage-2 helper): applied as
	// they are, before those of the lists.
	Rules []Rule

	// ScopeSignals stops signals to processes outside the sandbox's
	// Landlock domain (ABI 6).
	ScopeSignals bool
	// ScopeAbstractUnix stops connecting to abstract UNIX sockets created
	// outside the sandbox's Landlock domain (ABI 6).
	ScopeAbstractUnix bool
	// DenyTCP stops every TCP bind and connect (ABI 4). It is meant as a
	// second layer under an unrouted network namespace, not the only one:
	// it does not cover UDP, raw sockets or sockets opened earlier.
	DenyTCP bool
	// DenyTCPConnect stops every TCP connect but leaves bind alone (ABI
	// 4): for a sandbox whose supervisor makes its TCP connections for
	// it (the sandbox's connect broker), so that no connect the kernel
	// carries out for the sandbox itself can reach a socket of the
	// host's network namespace.
	DenyTCPConnect bool
}

// Enforces reports whether the feature named name is asked for and
// enforced.
func (s Status) Enforces(name string) bool {
	for _, f := range s.Features {
		if f.Name == name {
			return f.Enforced
		}
	}
	return false
}

// Feature is one part of a Ruleset and whether the running kernel enforces
// it.
type Feature struct {
	// Name is one of "filesystem", "refer", "truncate", "ioctl-dev",
	// "net-tcp", "net-tcp-connect", "scope-signal", "scope-abstract-unix".
	Name string
	// MinABI is the first Landlock ABI that enforces the feature.
	MinABI int
	// Enforced reports whether the running kernel enforces it.
	Enforced bool
	// Reason says why it is not enforced; empty when it is.
	Reason string
}

// Status describes a Ruleset as the running kernel enforces it.
type Status struct {
	// ABI is the kernel's Landlock ABI version; 0 when unavailable.
	ABI int
	// Features lists every feature the Ruleset asks for, in a fixed order.
	// The filesystem features are always asked for; net-tcp and the scopes
	// only when their field is set. A feature with Enforced false is a gap
	// the caller must accept or refuse.
	Features []Feature
	// Skipped lists the paths no rule was added for, each as "path: why".
	Skipped []string
	// AllThreads reports whether every thread of the process is in the
	// domain (ABI 8, LANDLOCK_RESTRICT_SELF_TSYNC). When false only the
	// calling thread and the processes and threads it creates afterwards
	// are.
	AllThreads bool
}

// ABI returns the running kernel's Landlock ABI version, or 0 when the
// kernel has no Landlock.
func ABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		// ENOSYS: not built in. EOPNOTSUPP: built in but disabled at boot.
		// Nothing else is expected, and none leaves Landlock usable.
		return 0
	}
	return int(v)
}

// Plan returns what Restrict would enforce on this kernel for rs, without
// enforcing anything. It checks the paths now; Restrict checks them again.
// A path Restrict would refuse appears in Skipped with that said.
func Plan(rs Ruleset) Status {
	abi := ABI()
	st := Status{ABI: abi, Features: features(rs, abi), AllThreads: abi >= abiTSync}
	for _, r := range rs.Compile() {
		if !path.IsAbs(r.Path) {
			st.Skipped = append(st.Skipped, r.Path+": not an absolute path; Restrict refuses it")
			continue
		}
		var s unix.Stat_t
		var err error
		if r.Type == TypeUnknown || r.Path == "/" {
			err = unix.Stat(r.Path, &s)
		} else if err = unix.Lstat(r.Path, &s); err == nil && s.Mode&unix.S_IFMT == unix.S_IFLNK {
			st.Skipped = append(st.Skipped, r.Path+": a symlink since the plan; not followed")
			continue
		}
		switch {
		case missing(err):
			st.Skipped = append(st.Skipped, r.Path+": does not exist")
		case err != nil:
			st.Skipped = append(st.Skipped, r.Path+": "+err.Error()+"; Restrict refuses it")
		}
	}
	return st
}

// Restrict enforces rs on the calling thread and returns what it enforced.
// On error nothing has been enforced, and the Status is the zero value.
//
// Landlock restricts the calling OS thread, not the Go program. Before ABI
// 8 the other threads of the process, which the Go runtime schedules
// goroutines on, stay unrestricted; from ABI 8 Restrict asks the kernel to
// restrict them all (Status.AllThreads). So the caller must:
//
//   - call runtime.LockOSThread first and never unlock it, so that the
//     restricted goroutine stays on the restricted thread; and
//   - do nothing after Restrict but execve (syscall.Exec), which carries
//     the calling thread's domain into the new program, whose threads and
//     children all inherit it.
//
// That is the stage-2 helper's shape. Restrict also sets no_new_privs on
// the calling thread, which landlock_restrict_self requires of callers
// without CAP_SYS_ADMIN and which the helper wants anyway.
//
// Features the kernel's ABI lacks are reported in Status.Features as not
// enforced rather than failing Restrict; a caller that requires one must
// check. Restrict fails, wrapping ErrUnavailable, only when the kernel has
// no Landlock at all.
func Restrict(rs Ruleset) (Status, error) {
	abi := ABI()
	if abi == 0 {
		return Status{}, fmt.Errorf("landlock: %w", ErrUnavailable)
	}

	attr := rulesetAttr{
		handledAccessFS:  handledFS(abi),
		handledAccessNet: handledNet(rs, abi),
		scoped:           scoped(rs, abi),
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET,
		uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return Status{}, fmt.Errorf("landlock: create ruleset: %w", errno)
	}
	ruleset := int(fd) // the kernel opens it O_CLOEXEC
	defer unix.Close(ruleset)

	skipped, err := addRules(ruleset, rs.Compile(), attr.handledAccessFS)
	if err != nil {
		return Status{}, err
	}

	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return Status{}, fmt.Errorf("landlock: set no_new_privs: %w", err)
	}
	flags := restrictFlags(abi)
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, flags, 0); errno != 0 {
		return Status{}, fmt.Errorf("landlock: restrict self: %w", errno)
	}

	return Status{
		ABI:        abi,
		Features:   features(rs, abi),
		Skipped:    skipped,
		AllThreads: flags&unix.LANDLOCK_RESTRICT_SELF_TSYNC != 0,
	}, nil
}

// rulesetAttr is struct landlock_ruleset_attr from <linux/landlock.h> as of
// ABI 6, the last ABI to grow it. Kernels before ABI 6 know a shorter
// struct (before ABI 4, handled_access_fs alone) and accept this one as long
// as the fields they do not know are zero, which handledNet and scoped
// guarantee. unix.LandlockRulesetAttr is
// not used because it carries fields no released ABI has.
type rulesetAttr struct {
	handledAccessFS  uint64
	handledAccessNet uint64
	scoped           uint64
}

// missing reports whether err means the path is not there: the last
// component is absent or an earlier one is not a directory.
func missing(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR)
}
