//go:build linux

package seccomp

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// NotifierOptions says what the connect notifier does besides stopping
// connect(2).
type NotifierOptions struct {
	// BrokerTCP also stops listen(2) and fails TCP Fast Open sends, for a
	// supervisor that makes the sandbox's TCP connections itself.
	BrokerTCP bool
	// ExecWatch also stops execve(2) and execveat(2), for a supervisor
	// that reports the execs the exec boundary refuses. It observes
	// only: it answers CONTINUE, and the kernel (noexec mounts, Landlock)
	// refuses what it refuses whatever the supervisor read.
	ExecWatch bool
	// CreateGuard also stops every call that gives a path a new entry
	// (CreateGuarded; open, openat and creat only with O_CREAT, so
	// ordinary opens never wait) and every chmod and chown, for a
	// supervisor that checks the new name or the target and carries the
	// call out itself (the sandbox package's create guard).
	CreateGuard bool
}

// CreateGuarded are the calls CreateGuard stops outright; open and
// openat stop only with O_CREAT in their flags.
var CreateGuarded = []string{
	"mkdir", "mkdirat", "mknod", "mknodat", "symlink", "symlinkat",
	"link", "linkat", "rename", "renameat", "renameat2", "creat",
	"chmod", "fchmod", "fchmodat", "fchmodat2",
	"chown", "lchown", "fchown", "fchownat",
	"truncate",
}

// oCreat is O_CREAT on both architectures. O_TMPFILE makes no name (a
// later linkat does, and stops), so it is not looked at.
const oCreat = 0o100

// BuildConnectNotifier compiles the second filter of a sandbox, whose
// listener the supervisor answers (see the sandbox package's connect
// broker and unix socket guard): connect(2) stops and waits for the
// supervisor (SECCOMP_RET_USER_NOTIF), which carries out every connect
// itself on its own copy of the socket, after checking a unix socket's
// destination; socket and socketpair of AF_UNIX datagram sockets fail
// with EACCES, since the kernel resolves a datagram's destination path
// at every send, where no supervisor could check it. With
// o.BrokerTCP, listen(2) stops too and a sendto, sendmsg or sendmmsg
// with MSG_FASTOPEN (a connect in disguise) fails with EOPNOTSUPP, so
// programs fall back to connect. Every other call, and every call of a
// foreign ABI, is left to the main filter (Build), which the kernel
// applies too. Of two filters the stricter action wins, so this one can
// only add a stop or a refusal, never lift one.
//
// Only one filter of a process may have a listener: any other stop a
// sandbox needs belongs in this filter.
func BuildConnectNotifier(arch string, o NotifierOptions) (Program, error) {
	spec, ok := archs[arch]
	if !ok {
		return Program{}, fmt.Errorf("seccomp: build connect notifier for %q: %w", arch, ErrUnsupportedArch)
	}
	nr := func(name string) uint32 { return mustSysnum(arch, spec, name) }
	const (
		lNotify     label = "notify"
		lFlagsArg2  label = "flags-arg2"
		lFlagsArg3  label = "flags-arg3"
		lCheck      label = "check-flags"
		lUnixDgram  label = "unix-dgram"
		lEACCES     label = "eacces"
		lOpenFlags1 label = "open-flags1"
		lOpenFlags2 label = "open-flags2"
	)
	var a assembler
	a.loadWord(offArch)
	a.jumpEq(spec.audit, next, lAllow)
	a.loadWord(offNr)
	if o.ExecWatch {
		a.jumpEq(nr("execve"), lNotify, next)
		a.jumpEq(nr("execveat"), lNotify, next)
	}
	a.jumpEq(nr("connect"), lNotify, next)
	if o.CreateGuard {
		for _, name := range CreateGuarded {
			if n, ok := lookupSysnum(spec, name); ok {
				a.jumpEq(n, lNotify, next)
			}
		}
		if n, ok := lookupSysnum(spec, "open"); ok {
			a.jumpEq(n, lOpenFlags1, next)
		}
		a.jumpEq(nr("openat"), lOpenFlags2, next)
	}
	a.jumpEq(nr("socket"), lUnixDgram, next)
	if !o.BrokerTCP {
		a.jumpEq(nr("socketpair"), lUnixDgram, lAllow)
	} else {
		a.jumpEq(nr("socketpair"), lUnixDgram, next)
		a.jumpEq(nr("listen"), lNotify, next)
		a.jumpEq(nr("sendto"), lFlagsArg3, next)
		a.jumpEq(nr("sendmmsg"), lFlagsArg3, next)
		a.jumpEq(nr("sendmsg"), lFlagsArg2, lAllow)
		a.mark(lFlagsArg3)
		a.loadWord(offArgLow(3))
		a.jumpEq(0, lAllow, lCheck) // no flags at all
		a.mark(lFlagsArg2)
		a.loadWord(offArgLow(2))
		a.mark(lCheck)
		a.jumpSet(msgFastOpen, next, lAllow)
		a.ret(unix.SECCOMP_RET_ERRNO | errnoEOPNOTSUPP)
	}
	// The kernel reads family and type as ints. Every type with bit 1
	// set is refused: SOCK_DGRAM (2), SOCK_RAW (3, which AF_UNIX turns
	// into a datagram socket), and only types AF_UNIX rejects anyway;
	// SOCK_STREAM (1) and SOCK_SEQPACKET (5) pass, and the flags
	// SOCK_NONBLOCK and SOCK_CLOEXEC lie above the type bits.
	a.mark(lUnixDgram)
	a.loadWord(offArgLow(0))
	a.jumpEq(unix.AF_UNIX, next, lAllow)
	a.loadWord(offArgLow(1))
	a.jumpSet(sockDgramBit, lEACCES, lAllow)
	if o.CreateGuard {
		// The kernel reads open flags as an int: the low word decides.
		a.mark(lOpenFlags1)
		a.loadWord(offArgLow(1))
		a.jumpSet(oCreat, lNotify, lAllow)
		a.mark(lOpenFlags2)
		a.loadWord(offArgLow(2))
		a.jumpSet(oCreat, lNotify, lAllow)
	}
	a.mark(lNotify)
	a.ret(unix.SECCOMP_RET_USER_NOTIF)
	a.mark(lAllow)
	a.ret(unix.SECCOMP_RET_ALLOW)
	a.mark(lEACCES)
	a.ret(unix.SECCOMP_RET_ERRNO | errnoEACCES)
	filter, err := a.assemble()
	if err != nil {
		return Program{}, fmt.Errorf("seccomp: build connect notifier for %s: %w", arch, err)
	}
	return Program{Arch: arch, Filter: filter}, nil
}

// sockDgramBit is the bit SOCK_DGRAM and SOCK_RAW share in a socket
// type, the same on both architectures.
const sockDgramBit = 0x2

// errnoEACCES is EACCES on x86_64 and asm-generic alike.
const errnoEACCES = 13

// msgFastOpen is MSG_FASTOPEN, the same on both architectures.
const msgFastOpen = 0x20000000

// errnoEOPNOTSUPP is EOPNOTSUPP on x86_64 and asm-generic alike.
const errnoEOPNOTSUPP = 95

// InstallNotifier puts p on every thread of the calling process like
// Install (but with no_new_privs or CAP_SYS_ADMIN in the caller's user
// namespace: the kernel checks), and returns the filter's listener: a close-on-exec descriptor
// on which the stops p makes arrive (seccomp_unotify(2)). Only one filter
// in a process's chain may have a listener, so this fails with EBUSY
// inside a sandbox that already has one; callers treat any error as "no
// notifier" and go on without.
func InstallNotifier(p Program) (int, error) {
	if p.Arch != runtime.GOARCH {
		return -1, fmt.Errorf("seccomp: install notifier: program is for %s, this process is %s", p.Arch, runtime.GOARCH)
	}
	if err := validate(p.Filter); err != nil {
		return -1, fmt.Errorf("seccomp: install notifier: invalid program: %w", err)
	}
	fprog := unix.SockFprog{Len: uint16(len(p.Filter)), Filter: &p.Filter[0]}
	// TSYNC with a listener needs TSYNC_ESRCH: the result must be the
	// listener, not a thread id.
	flags := uintptr(unix.SECCOMP_FILTER_FLAG_TSYNC | unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH | unix.SECCOMP_FILTER_FLAG_NEW_LISTENER)
	// A stopped call waits for the supervisor's answer. In an
	// interruptible wait, a signal the program handles without
	// SA_RESTART (a shell's trap) makes it fail with EINTR, where the
	// same call without airlock would have succeeded. WAIT_KILLABLE_RECV
	// (Linux 5.19) makes the wait, once the supervisor has the call,
	// killable only; the signal is delivered when the call returns.
	// Older kernels refuse the flag: the filter goes on without it
	// (KillableWait; the Report says so).
	fd, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		flags|unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, uintptr(unsafe.Pointer(&fprog)))
	if errno == unix.EINVAL {
		fd, _, errno = unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog)))
	}
	runtime.KeepAlive(p.Filter)
	if errno != 0 {
		return -1, fmt.Errorf("seccomp: install notifier: seccomp(SECCOMP_SET_MODE_FILTER): %w", errno)
	}
	return int(fd), nil
}

// KillableWait reports whether a kernel of this release (uname -r) makes
// a call stopped by the notifier wait for its answer without being
// interrupted by signals (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, Linux
// 5.19), which InstallNotifier asks for.
func KillableWait(release string) bool {
	var major, minor int
	if _, err := fmt.Sscanf(release, "%d.%d", &major, &minor); err != nil {
		return false
	}
	return major > 5 || major == 5 && minor >= 19
}
