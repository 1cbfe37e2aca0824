//go:build linux

package seccomp

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BuildConnectNotifier compiles the second, optional filter of a sandbox
// whose network is served by the egress gateway: connect(2) stops and
// waits for the supervisor (SECCOMP_RET_USER_NOTIF); every other call, and
// every call of a foreign ABI, is left to the main filter (Build), which
// the kernel applies too. Of two filters the stricter action wins, so this
// one can only add a stop, never lift a refusal.
//
// The supervisor answers each stop either by letting the call go on into
// the sandbox's own network namespace (where the gateway decides it as
// always) or by connecting a host socket to the same destination itself,
// after the same decision, and putting it in the place of the sandbox's:
// see the sandbox package's connect broker.
func BuildConnectNotifier(arch string) (Program, error) {
	spec, ok := archs[arch]
	if !ok {
		return Program{}, fmt.Errorf("seccomp: build connect notifier for %q: %w", arch, ErrUnsupportedArch)
	}
	connect, ok := lookupSysnum(spec, "connect")
	if !ok {
		return Program{}, fmt.Errorf("seccomp: build connect notifier: %s has no connect", arch)
	}
	var a assembler
	a.loadWord(offArch)
	a.jumpEq(spec.audit, next, lAllow)
	a.loadWord(offNr)
	a.jumpEq(connect, next, lAllow)
	a.ret(unix.SECCOMP_RET_USER_NOTIF)
	a.mark(lAllow)
	a.ret(unix.SECCOMP_RET_ALLOW)
	filter, err := a.assemble()
	if err != nil {
		return Program{}, fmt.Errorf("seccomp: build connect notifier for %s: %w", arch, err)
	}
	return Program{Arch: arch, Filter: filter}, nil
}

// InstallNotifier puts p on every thread of the calling process like
// Install, and returns the filter's listener: a close-on-exec descriptor
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
	if nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); err != nil || nnp != 1 {
		return -1, errors.New("seccomp: install notifier: no_new_privs is not set")
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
