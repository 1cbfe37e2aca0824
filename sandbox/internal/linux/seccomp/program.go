//go:build linux

package seccomp

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// Program is a compiled filter for one architecture.
type Program struct {
	// Arch is the GOARCH the filter was built for ("amd64" or "arm64").
	// Install refuses a program whose Arch is not the running process's.
	Arch string
	// Filter is the classic-BPF program, at most unix.BPF_MAXINSNS long.
	Filter []unix.SockFilter
}

// ErrUnsupportedArch is returned by Build for an architecture it has no
// filter for.
var ErrUnsupportedArch = errors.New("no seccomp filter for this architecture")

// archSpec is what the filter needs to know about one architecture.
type archSpec struct {
	audit  uint32           // seccomp_data.arch of the native ABI
	x32    bool             // whether native-arch syscalls may carry the x32 bit
	column func(sysnum) int // the architecture's column of the number table
}

var archs = map[string]archSpec{
	"amd64": {audit: unix.AUDIT_ARCH_X86_64, x32: true, column: func(s sysnum) int { return s.amd64 }},
	"arm64": {audit: unix.AUDIT_ARCH_AARCH64, column: func(s sysnum) int { return s.arm64 }},
}

// Offsets into struct seccomp_data. Arguments are 64 bits wide; both
// supported architectures are little-endian, so an argument's low 32-bit word
// comes first.
const (
	offNr   = 0
	offArch = 4
)

func offArgLow(i uint32) uint32 { return 16 + 8*i }

// x32SyscallBit marks a syscall made through the x32 ABI. Such calls carry
// AUDIT_ARCH_X86_64 in seccomp_data.arch, so only the number tells them apart.
const x32SyscallBit = 0x40000000

// Values the filter compares or returns that golang.org/x/sys/unix defines
// per build architecture. They are the same on x86_64 and on the asm-generic
// ABI that arm64 uses (include/uapi/asm-generic/errno*.h, ioctls.h), and the
// filter must not change if this package is compiled for another GOARCH.
const (
	errnoEPERM        = 1
	errnoENOSYS       = 38
	errnoEAFNOSUPPORT = 97
	ioctlTIOCSTI      = 0x5412
	ioctlTIOCLINUX    = 0x541c
)

// personality(2) values that stay allowed: the query that changes nothing,
// and PER_LINUX, the default.
const (
	personalityQuery = 0xffffffff
	personalityLinux = 0
)

// denied lists the syscalls that always fail with EPERM, grouped by why.
// A syscall the target architecture lacks is skipped.
var denied = []struct {
	why   string
	names []string
}{
	{"debugging and reading or writing other processes' memory",
		[]string{"ptrace", "process_vm_readv", "process_vm_writev"}},
	{"kernel interfaces with a history of privilege escalation",
		[]string{"bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register"}},
	{"kernel keyrings",
		[]string{"keyctl", "add_key", "request_key"}},
	{"loading kernel code",
		[]string{"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module"}},
	{"changing or inspecting the mount tree",
		[]string{"mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "open_tree_attr",
			"fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "listmount", "statmount"}},
	{"joining other namespaces",
		[]string{"setns"}},
	{"opening files by handle, around path-based checks",
		[]string{"name_to_handle_at", "open_by_handle_at"}},
	{"host-wide state: swap, reboot, accounting, kernel log, clocks, quotas, terminal hangup, filesystem-wide watches",
		[]string{"swapon", "swapoff", "reboot", "acct", "syslog", "settimeofday", "clock_settime",
			"clock_adjtime", "adjtimex", "quotactl", "quotactl_fd", "vhangup", "fanotify_init"}},
	{"obsolete or x86-only interfaces",
		[]string{"lookup_dcookie", "nfsservctl", "uselib", "iopl", "ioperm", "modify_ldt"}},
}

// conditional describes, in the order Build emits them, the rules that look
// at arguments; Blocked reports them.
var conditional = []string{
	"personality: EPERM for anything but the query (0xffffffff) and PER_LINUX (0)",
	"unshare and clone with CLONE_NEWUSER: EPERM (no new user namespaces)",
	"clone3: ENOSYS (its flags are in memory the filter cannot read; libc falls back to clone)",
	"ioctl TIOCSTI and TIOCLINUX: EPERM (no typing into another terminal)",
	"socket and socketpair outside AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK with NETLINK_ROUTE: EAFNOSUPPORT",
}

// Labels of the shared tails of the program.
const (
	lAllow        label = "allow"
	lEPERM        label = "eperm"
	lENOSYS       label = "enosys"
	lEAFNOSUPPORT label = "eafnosupport"
	lKill         label = "kill"
	lPersonality  label = "personality"
	lNewUser      label = "newuser"
	lIoctl        label = "ioctl"
	lSocket       label = "socket"
)

// Build compiles the filter for arch, a GOARCH name: "amd64" or "arm64".
//
// The program is a straight chain of comparisons on the syscall number. That
// is fast enough: since Linux 5.11 the kernel evaluates a filter once per
// syscall number that never looks at arguments and caches "allow", so
// read, write, futex and the like skip the filter entirely.
func Build(arch string) (Program, error) {
	spec, ok := archs[arch]
	if !ok {
		return Program{}, fmt.Errorf("seccomp: build filter for %q: %w", arch, ErrUnsupportedArch)
	}
	nr := func(name string) uint32 { return mustSysnum(arch, spec, name) }

	var a assembler
	// Foreign ABIs have their own syscall numbers; kill rather than
	// misjudge them.
	a.loadWord(offArch)
	a.jumpEq(spec.audit, next, lKill)
	a.loadWord(offNr)
	if spec.x32 {
		a.jumpSet(x32SyscallBit, lKill, next)
	}
	for _, g := range denied {
		for _, name := range g.names {
			if n, ok := lookupSysnum(spec, name); ok {
				a.jumpEq(n, lEPERM, next)
			}
		}
	}
	a.jumpEq(nr("personality"), lPersonality, next)
	a.jumpEq(nr("unshare"), lNewUser, next)
	a.jumpEq(nr("clone"), lNewUser, next)
	a.jumpEq(nr("clone3"), lENOSYS, next)
	a.jumpEq(nr("ioctl"), lIoctl, next)
	a.jumpEq(nr("socket"), lSocket, next)
	a.jumpEq(nr("socketpair"), lSocket, next)
	emitModeDispatch(&a, spec) // modes.go
	a.ret(unix.SECCOMP_RET_ALLOW)

	// The kernel reads personality, ioctl's cmd, and socket's family and
	// protocol as 32-bit ints, so only the low word decides; comparing all
	// 64 bits would let junk in the high word slip past.
	a.mark(lPersonality)
	a.loadWord(offArgLow(0))
	a.jumpEq(personalityQuery, lAllow, next)
	a.jumpEq(personalityLinux, lAllow, lEPERM)

	// Flags are the first argument of both unshare and clone, on both
	// architectures; CLONE_NEWUSER is in the low word.
	a.mark(lNewUser)
	a.loadWord(offArgLow(0))
	a.jumpSet(unix.CLONE_NEWUSER, lEPERM, lAllow)

	a.mark(lIoctl)
	a.loadWord(offArgLow(1))
	a.jumpEq(ioctlTIOCSTI, lEPERM, next)
	a.jumpEq(ioctlTIOCLINUX, lEPERM, lAllow)

	a.mark(lSocket)
	a.loadWord(offArgLow(0))
	a.jumpEq(unix.AF_UNIX, lAllow, next)
	a.jumpEq(unix.AF_INET, lAllow, next)
	a.jumpEq(unix.AF_INET6, lAllow, next)
	a.jumpEq(unix.AF_NETLINK, next, lEAFNOSUPPORT)
	a.loadWord(offArgLow(2))
	a.jumpEq(unix.NETLINK_ROUTE, lAllow, lEAFNOSUPPORT)

	emitModeChecks(&a)

	a.mark(lAllow)
	a.ret(unix.SECCOMP_RET_ALLOW)
	a.mark(lEPERM)
	a.ret(unix.SECCOMP_RET_ERRNO | errnoEPERM)
	a.mark(lENOSYS)
	a.ret(unix.SECCOMP_RET_ERRNO | errnoENOSYS)
	a.mark(lEAFNOSUPPORT)
	a.ret(unix.SECCOMP_RET_ERRNO | errnoEAFNOSUPPORT)
	a.mark(lKill)
	a.ret(unix.SECCOMP_RET_KILL_PROCESS)

	filter, err := a.assemble()
	if err != nil {
		return Program{}, fmt.Errorf("seccomp: build filter for %s: %w", arch, err)
	}
	return Program{Arch: arch, Filter: filter}, nil
}

// Blocked describes in words what the filter for the running architecture
// (runtime.GOARCH) blocks, one rule per line, for the sandbox's report. It
// returns nil if Build has no filter for this architecture.
func Blocked() []string {
	spec, ok := archs[runtime.GOARCH]
	if !ok {
		return nil
	}
	var lines []string
	if spec.x32 {
		lines = append(lines, "syscalls through the i386 or x32 ABI: process killed")
	} else {
		lines = append(lines, "syscalls through a non-native ABI: process killed")
	}
	for _, g := range denied {
		var present []string
		for _, name := range g.names {
			if _, ok := lookupSysnum(spec, name); ok {
				present = append(present, name)
			}
		}
		if len(present) > 0 {
			lines = append(lines, fmt.Sprintf("%s: EPERM (%s)", strings.Join(present, ", "), g.why))
		}
	}
	return append(append(lines, conditional...), modeConditional...)
}
