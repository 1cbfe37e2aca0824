//go:build linux

package seccomp

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// BuildExecGuard compiles the filter a sandbox adds when its profile
// limits where programs may run from: memfd_create and memfd_secret fail
// with ENOSYS. An anonymous file lies beneath no path, so neither Landlock
// nor a noexec mount keeps it from being executed (execveat AT_EMPTY_PATH,
// /proc/self/fd/N) or mapped by the dynamic loader. ENOSYS, not EPERM, so
// that programs which use one for shared memory take the fallback they
// have for kernels before 3.17 (a file in /dev/shm or a temporary
// directory, which the sandbox mounts noexec). Every other call is left
// to the main filter (Build), which the kernel applies too.
func BuildExecGuard(arch string) (Program, error) {
	spec, ok := archs[arch]
	if !ok {
		return Program{}, fmt.Errorf("seccomp: build exec guard for %q: %w", arch, ErrUnsupportedArch)
	}
	var a assembler
	a.loadWord(offArch)
	a.jumpEq(spec.audit, next, lAllow)
	a.loadWord(offNr)
	for _, name := range execGuarded {
		if n, ok := lookupSysnum(spec, name); ok {
			a.jumpEq(n, lENOSYS, next)
		}
	}
	a.mark(lAllow)
	a.ret(unix.SECCOMP_RET_ALLOW)
	a.mark(lENOSYS)
	a.ret(unix.SECCOMP_RET_ERRNO | errnoENOSYS)
	filter, err := a.assemble()
	if err != nil {
		return Program{}, fmt.Errorf("seccomp: build exec guard for %s: %w", arch, err)
	}
	return Program{Arch: arch, Filter: filter}, nil
}

// execGuarded are the calls BuildExecGuard refuses.
var execGuarded = []string{"memfd_create", "memfd_secret"}
