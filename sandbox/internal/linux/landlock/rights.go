package landlock

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// Landlock ABI versions at which a right or flag first exists, per the
// kernel uapi header <linux/landlock.h> and
// Documentation/userspace-api/landlock.rst. Asking an older kernel for any
// of them makes the syscall fail with EINVAL, so every mask below is cut to
// the running ABI before it is used.
const (
	abiFilesystem = 1 // the 13 base LANDLOCK_ACCESS_FS_* rights
	abiRefer      = 2 // LANDLOCK_ACCESS_FS_REFER
	abiTruncate   = 3 // LANDLOCK_ACCESS_FS_TRUNCATE
	abiNetTCP     = 4 // handled_access_net, LANDLOCK_ACCESS_NET_{BIND,CONNECT}_TCP
	abiIoctlDev   = 5 // LANDLOCK_ACCESS_FS_IOCTL_DEV
	abiScope      = 6 // scoped, LANDLOCK_SCOPE_{ABSTRACT_UNIX_SOCKET,SIGNAL}
	abiTSync      = 8 // LANDLOCK_RESTRICT_SELF_TSYNC
)

// Filesystem rights, from LANDLOCK_ACCESS_FS_* in <linux/landlock.h>.
const (
	// accessBase is every right ABI 1 knows. MAKE_CHAR and MAKE_BLOCK are
	// in it so that they are handled, and no Ruleset list ever grants them:
	// a sandboxed command never creates device nodes.
	accessBase = unix.LANDLOCK_ACCESS_FS_EXECUTE |
		unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR |
		unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
		unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_FIFO |
		unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM

	accessRead = unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_DIR

	accessWrite = accessRead |
		unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
		unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_FIFO |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM |
		unix.LANDLOCK_ACCESS_FS_REFER |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE

	accessExec = unix.LANDLOCK_ACCESS_FS_EXECUTE

	accessIoctlDev = unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

	// accessFile is what a rule on a non-directory may carry; the other
	// rights concern a directory's entries, and the kernel answers EINVAL
	// when a rule on a file asks for them.
	accessFile = unix.LANDLOCK_ACCESS_FS_EXECUTE |
		unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE |
		unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
)

// accessNetTCP is handled with no rule at all when Ruleset.DenyTCP is set,
// which leaves no port to bind or connect to.
const accessNetTCP = unix.LANDLOCK_ACCESS_NET_BIND_TCP |
	unix.LANDLOCK_ACCESS_NET_CONNECT_TCP

// handledFS is every filesystem right the given ABI knows. Handling all of
// them is what makes the ruleset deny by default: a right left unhandled is
// a right left open. Rights newer than abiIoctlDev are not handled because
// this package grants none of them and has not been tested against them.
func handledFS(abi int) uint64 {
	if abi < abiFilesystem {
		return 0
	}
	h := uint64(accessBase)
	if abi >= abiRefer {
		h |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= abiTruncate {
		h |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= abiIoctlDev {
		h |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return h
}

// handledNet is the network rights the ruleset handles.
func handledNet(rs Ruleset, abi int) uint64 {
	if abi < abiNetTCP {
		return 0
	}
	switch {
	case rs.DenyTCP:
		return accessNetTCP
	case rs.DenyTCPConnect:
		return unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	return 0
}

// scoped is the IPC scopes the ruleset sets.
func scoped(rs Ruleset, abi int) uint64 {
	if abi < abiScope {
		return 0
	}
	var s uint64
	if rs.ScopeSignals {
		s |= unix.LANDLOCK_SCOPE_SIGNAL
	}
	if rs.ScopeAbstractUnix {
		s |= unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
	}
	return s
}

// restrictFlags is the landlock_restrict_self flags. TSYNC is the only one:
// from ABI 8 it puts every thread of the process in the new domain, which
// is strictly stronger than the calling thread alone. Logging flags
// (ABI 7) are left at the kernel's default.
func restrictFlags(abi int) uintptr {
	if abi >= abiTSync {
		return unix.LANDLOCK_RESTRICT_SELF_TSYNC
	}
	return 0
}

// features lists what rs asks for, each with whether abi enforces it. The
// filesystem features are always asked for: every ruleset handles them.
func features(rs Ruleset, abi int) []Feature {
	fs := []Feature{
		{Name: "filesystem", MinABI: abiFilesystem},
		{Name: "refer", MinABI: abiRefer},
		{Name: "truncate", MinABI: abiTruncate},
		{Name: "ioctl-dev", MinABI: abiIoctlDev},
	}
	if rs.DenyTCP {
		fs = append(fs, Feature{Name: "net-tcp", MinABI: abiNetTCP})
	} else if rs.DenyTCPConnect {
		fs = append(fs, Feature{Name: "net-tcp-connect", MinABI: abiNetTCP})
	}
	if rs.ScopeSignals {
		fs = append(fs, Feature{Name: "scope-signal", MinABI: abiScope})
	}
	if rs.ScopeAbstractUnix {
		fs = append(fs, Feature{Name: "scope-abstract-unix", MinABI: abiScope})
	}
	for i := range fs {
		f := &fs[i]
		switch {
		case abi == 0:
			f.Reason = "Landlock is unavailable on this kernel"
		case abi < f.MinABI:
			f.Reason = "needs Landlock ABI " + strconv.Itoa(f.MinABI) + "; this kernel has ABI " + strconv.Itoa(abi)
		default:
			f.Enforced = true
		}
	}
	return fs
}
