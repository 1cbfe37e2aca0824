//go:build linux

package seccomp

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BuildConnectNotifier compiles the second, optional filter of a sandbox
// whose network is served by the egress gateway: connect(2) and listen(2)
// stop and wait for the supervisor (SECCOMP_RET_USER_NOTIF), and a
// sendto, sendmsg or sendmmsg with MSG_FASTOPEN (a connect in disguise)
// fails with EOPNOTSUPP, so programs fall back to connect. Every other
// call, and every call of a foreign ABI, is left to the main filter
// (Build), which the kernel applies too. Of two filters the stricter
// action wins, so this one can only add a stop or a refusal, never lift
// one.
//
// The supervisor answers each stop (see the sandbox package's connect
// broker): for an allowed TCP destination it connects a host socket
// itself and puts it in the place of the sandbox's; every other TCP
// connect and every listen it carries out itself on the sandbox's own
// socket, after checking which network namespace that socket is in.
func BuildConnectNotifier(arch string) (Program, error) {
	spec, ok := archs[arch]
	if !ok {
		return Program{}, fmt.Errorf("seccomp: build connect notifier for %q: %w", arch, ErrUnsupportedArch)
	}
	nr := func(name string) uint32 { return mustSysnum(arch, spec, name) }
	const (
		lNotify    label = "notify"
		lFlagsArg2 label = "flags-arg2"
		lFlagsArg3 label = "flags-arg3"
		lCheck     label = "check-flags"
	)
	var a assembler
	a.loadWord(offArch)
	a.jumpEq(spec.audit, next, lAllow)
	a.loadWord(offNr)
	a.jumpEq(nr("connect"), lNotify, next)
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
	a.mark(lNotify)
	a.ret(unix.SECCOMP_RET_USER_NOTIF)
	a.mark(lAllow)
	a.ret(unix.SECCOMP_RET_ALLOW)
	filter, err := a.assemble()
	if err != nil {
		return Program{}, fmt.Errorf("seccomp: build connect notifier for %s: %w", arch, err)
	}
	return Program{Arch: arch, Filter: filter}, nil
}

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
	fd, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC|unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH|unix.SECCOMP_FILTER_FLAG_NEW_LISTENER,
		uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(p.Filter)
	if errno != 0 {
		return -1, fmt.Errorf("seccomp: install notifier: seccomp(SECCOMP_SET_MODE_FILTER): %w", errno)
	}
	return int(fd), nil
}
