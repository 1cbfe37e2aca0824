//go:build linux

package seccomp

// sysnum is one syscall's number on each architecture a filter can be built
// for; absent (-1) means the architecture has no such syscall.
//
// The numbers are spelled out rather than taken from golang.org/x/sys/unix
// because unix.SYS_* only describes the architecture the binary was compiled
// for, and Build must produce a filter for either architecture from any build.
// Sources: the kernel's arch/x86/entry/syscalls/syscall_64.tbl (64-bit and
// common rows) and include/uapi/asm-generic/unistd.h, which arm64 uses.
// The tests check the table against unix.SYS_* for the architecture they run on.
type sysnum struct {
	name         string
	amd64, arm64 int
}

const absent = -1

var sysnums = []sysnum{
	{"acct", 163, 89},
	{"add_key", 248, 217},
	{"adjtimex", 159, 171},
	{"bpf", 321, 280},
	{"chmod", 90, absent},
	{"chown", 92, absent},
	{"chroot", 161, 51},
	{"clock_adjtime", 305, 266},
	{"clock_settime", 227, 112},
	{"clone", 56, 220},
	{"clone3", 435, 435},
	{"connect", 42, 203},
	{"creat", 85, absent},
	{"delete_module", 176, 106},
	{"execve", 59, 221},
	{"execveat", 322, 281},
	{"fanotify_init", 300, 262},
	{"fchmod", 91, 52},
	{"fchmodat", 268, 53},
	{"fchmodat2", 452, 452},
	{"fchown", 93, 55},
	{"fchownat", 260, 54},
	{"finit_module", 313, 273},
	{"fsconfig", 431, 431},
	{"fsmount", 432, 432},
	{"fsopen", 430, 430},
	{"fspick", 433, 433},
	{"init_module", 175, 105},
	{"io_uring_enter", 426, 426},
	{"io_uring_register", 427, 427},
	{"io_uring_setup", 425, 425},
	{"ioctl", 16, 29},
	{"ioperm", 173, absent},
	{"iopl", 172, absent},
	{"kexec_file_load", 320, 294},
	{"kexec_load", 246, 104},
	{"keyctl", 250, 219},
	{"lchown", 94, absent},
	{"link", 86, absent},
	{"linkat", 265, 37},
	{"listen", 50, 201},
	{"listmount", 458, 458}, // Linux 6.8
	{"lookup_dcookie", 212, 18},
	{"memfd_create", 319, 279},
	{"memfd_secret", 447, 447}, // Linux 5.14
	{"mkdir", 83, absent},
	{"mkdirat", 258, 34},
	{"mknod", 133, absent},
	{"mknodat", 259, 33},
	{"modify_ldt", 154, absent},
	{"mount", 165, 40},
	{"mount_setattr", 442, 442},
	{"move_mount", 429, 429},
	{"name_to_handle_at", 303, 264},
	{"nfsservctl", 180, 42}, // the kernel only reserves the number since 3.1
	{"open", 2, absent},
	{"open_by_handle_at", 304, 265},
	{"open_tree", 428, 428},
	{"open_tree_attr", 467, 467}, // Linux 6.15
	{"openat", 257, 56},
	{"openat2", 437, 437},
	{"perf_event_open", 298, 241},
	{"personality", 135, 92},
	{"pivot_root", 155, 41},
	{"process_vm_readv", 310, 270},
	{"process_vm_writev", 311, 271},
	{"ptrace", 101, 117},
	{"quotactl", 179, 60},
	{"quotactl_fd", 443, 443},
	{"reboot", 169, 142},
	{"rename", 82, absent},
	{"renameat", 264, 38},
	{"renameat2", 316, 276},
	{"request_key", 249, 218},
	{"sendmmsg", 307, 269},
	{"sendmsg", 46, 211},
	{"sendto", 44, 206},
	{"setns", 308, 268},
	{"settimeofday", 164, 170},
	{"socket", 41, 198},
	{"socketpair", 53, 199},
	{"statmount", 457, 457}, // Linux 6.8
	{"swapoff", 168, 225},
	{"swapon", 167, 224},
	{"symlink", 88, absent},
	{"symlinkat", 266, 36},
	{"syslog", 103, 116},
	{"truncate", 76, 45},
	{"umount2", 166, 39},
	{"unshare", 272, 97},
	{"uselib", 134, absent},
	{"userfaultfd", 323, 282},
	{"vhangup", 153, 58},
}

// mustSysnum is lookupSysnum for a syscall every architecture with a
// filter has: a missing one is a bug in the table.
func mustSysnum(arch string, spec archSpec, name string) uint32 {
	n, ok := lookupSysnum(spec, name)
	if !ok {
		panic("seccomp: " + arch + " has no " + name)
	}
	return n
}

// lookupSysnum returns the number of the named syscall on spec's
// architecture, or ok=false if the architecture has no such syscall. A name
// missing from the table is a bug in this package and panics, so a typo cannot
// silently drop a rule; the tests build every architecture.
func lookupSysnum(spec archSpec, name string) (nr uint32, ok bool) {
	for _, s := range sysnums {
		if s.name != name {
			continue
		}
		n := spec.column(s)
		if n == absent {
			return 0, false
		}
		return uint32(n), true
	}
	panic("seccomp: syscall " + name + " missing from the number table")
}

// Numbers maps the number of each named syscall that arch has to its
// name, for a supervisor that answers the notifier's stops by name.
func Numbers(arch string, names ...string) map[int32]string {
	spec, ok := archs[arch]
	if !ok {
		return nil
	}
	out := map[int32]string{}
	for _, name := range names {
		if n, ok := lookupSysnum(spec, name); ok {
			out[int32(n)] = name
		}
	}
	return out
}
