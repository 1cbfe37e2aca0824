//go:build linux

package seccomp

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// seccompData mirrors the kernel's struct seccomp_data.
type seccompData struct {
	nr   uint32
	arch uint32
	ip   uint64
	args [6]uint64
}

// interpret runs a filter on d as the kernel would, for the instructions
// validate accepts, and returns the action.
func interpret(prog []unix.SockFilter, d seccompData) (uint32, error) {
	var mem [seccompDataSize]byte
	binary.LittleEndian.PutUint32(mem[0:], d.nr)
	binary.LittleEndian.PutUint32(mem[4:], d.arch)
	binary.LittleEndian.PutUint64(mem[8:], d.ip)
	for i, a := range d.args {
		binary.LittleEndian.PutUint64(mem[16+8*i:], a)
	}
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			if in.K%4 != 0 || in.K+4 > seccompDataSize {
				return 0, fmt.Errorf("pc %d: load from %d", pc, in.K)
			}
			acc = binary.LittleEndian.Uint32(mem[in.K:])
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K:
			pc += jumpBy(acc == in.K, in)
		case unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			pc += jumpBy(acc&in.K != 0, in)
		case unix.BPF_RET | unix.BPF_K:
			return in.K, nil
		default:
			return 0, fmt.Errorf("pc %d: opcode %#x", pc, in.Code)
		}
	}
	return 0, fmt.Errorf("ran off the end of %d instructions", len(prog))
}

func jumpBy(cond bool, in unix.SockFilter) int {
	if cond {
		return int(in.Jt)
	}
	return int(in.Jf)
}

const (
	actAllow        = unix.SECCOMP_RET_ALLOW
	actKill         = unix.SECCOMP_RET_KILL_PROCESS
	actEPERM        = unix.SECCOMP_RET_ERRNO | errnoEPERM
	actENOSYS       = unix.SECCOMP_RET_ERRNO | errnoENOSYS
	actEAFNOSUPPORT = unix.SECCOMP_RET_ERRNO | errnoEAFNOSUPPORT
)

// call is the seccomp_data of the named syscall on arch's native ABI.
func call(arch, name string, args ...uint64) seccompData {
	nr, ok := lookupSysnum(archs[arch], name)
	if !ok {
		panic(arch + " has no " + name)
	}
	d := seccompData{nr: nr, arch: archs[arch].audit}
	copy(d.args[:], args)
	return d
}

func TestInterpretFilter(t *testing.T) {
	const high = 1 << 32 // bits the kernel drops from int arguments
	tests := []struct {
		arch string
		name string
		data seccompData
		want uint32
	}{
		{"amd64", "getpid", seccompData{nr: 39, arch: unix.AUDIT_ARCH_X86_64}, actAllow},
		{"amd64", "i386 ABI", seccompData{nr: 20, arch: unix.AUDIT_ARCH_I386}, actKill},
		{"amd64", "aarch64 arch on amd64", seccompData{nr: 172, arch: unix.AUDIT_ARCH_AARCH64}, actKill},
		{"amd64", "x32 getpid", seccompData{nr: x32SyscallBit | 39, arch: unix.AUDIT_ARCH_X86_64}, actKill},
		{"amd64", "x32 ptrace", seccompData{nr: x32SyscallBit | 521, arch: unix.AUDIT_ARCH_X86_64}, actKill},
		{"amd64", "ptrace", call("amd64", "ptrace"), actEPERM},
		{"amd64", "iopl", call("amd64", "iopl", 3), actEPERM},
		{"amd64", "open_tree_attr", call("amd64", "open_tree_attr"), actEPERM},
		{"amd64", "personality query", call("amd64", "personality", 0xffffffff), actAllow},
		{"amd64", "personality PER_LINUX", call("amd64", "personality", 0), actAllow},
		{"amd64", "personality PER_LINUX32", call("amd64", "personality", 8), actEPERM},
		{"amd64", "personality ADDR_NO_RANDOMIZE", call("amd64", "personality", 0x0040000), actEPERM},
		{"amd64", "unshare CLONE_NEWUSER", call("amd64", "unshare", unix.CLONE_NEWUSER|unix.CLONE_NEWNS), actEPERM},
		{"amd64", "unshare CLONE_NEWNS", call("amd64", "unshare", unix.CLONE_NEWNS), actAllow},
		{"amd64", "clone thread", call("amd64", "clone", unix.CLONE_VM|unix.CLONE_THREAD|unix.CLONE_SIGHAND), actAllow},
		{"amd64", "clone CLONE_NEWUSER", call("amd64", "clone", unix.CLONE_NEWUSER|uint64(unix.SIGCHLD)), actEPERM},
		{"amd64", "clone3", call("amd64", "clone3"), actENOSYS},
		{"amd64", "ioctl TIOCSTI", call("amd64", "ioctl", 0, ioctlTIOCSTI), actEPERM},
		{"amd64", "ioctl TIOCSTI high bits", call("amd64", "ioctl", 0, high|ioctlTIOCSTI), actEPERM},
		{"amd64", "ioctl TIOCLINUX", call("amd64", "ioctl", 0, ioctlTIOCLINUX), actEPERM},
		{"amd64", "ioctl TIOCGWINSZ", call("amd64", "ioctl", 0, 0x5413), actAllow},
		{"amd64", "ioctl TIOCSTI as fd", call("amd64", "ioctl", ioctlTIOCSTI, 0x5413), actAllow},
		{"amd64", "socket AF_INET", call("amd64", "socket", unix.AF_INET, unix.SOCK_STREAM), actAllow},
		{"amd64", "socket AF_INET high bits", call("amd64", "socket", high|unix.AF_INET), actAllow},
		{"amd64", "socket AF_INET6", call("amd64", "socket", unix.AF_INET6), actAllow},
		{"amd64", "socket AF_UNIX", call("amd64", "socket", unix.AF_UNIX), actAllow},
		{"amd64", "socket AF_PACKET", call("amd64", "socket", unix.AF_PACKET, unix.SOCK_RAW), actEAFNOSUPPORT},
		{"amd64", "socket AF_PACKET high bits", call("amd64", "socket", high|unix.AF_PACKET), actEAFNOSUPPORT},
		{"amd64", "socket AF_VSOCK", call("amd64", "socket", unix.AF_VSOCK), actEAFNOSUPPORT},
		{"amd64", "socket AF_ALG", call("amd64", "socket", unix.AF_ALG), actEAFNOSUPPORT},
		{"amd64", "socket NETLINK_ROUTE", call("amd64", "socket", unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE), actAllow},
		{"amd64", "socket NETLINK_AUDIT", call("amd64", "socket", unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT), actEAFNOSUPPORT},
		{"amd64", "socketpair AF_UNIX", call("amd64", "socketpair", unix.AF_UNIX), actAllow},
		{"amd64", "socketpair AF_PACKET", call("amd64", "socketpair", unix.AF_PACKET), actEAFNOSUPPORT},
		{"arm64", "getpid", seccompData{nr: 172, arch: unix.AUDIT_ARCH_AARCH64}, actAllow},
		{"arm64", "ptrace", seccompData{nr: 117, arch: unix.AUDIT_ARCH_AARCH64}, actEPERM},
		{"arm64", "arm32 ABI", seccompData{nr: 20, arch: unix.AUDIT_ARCH_ARM}, actKill},
		{"arm64", "x86_64 arch on arm64", seccompData{nr: 39, arch: unix.AUDIT_ARCH_X86_64}, actKill},
		{"arm64", "clone CLONE_NEWUSER", call("arm64", "clone", unix.CLONE_NEWUSER), actEPERM},
		{"arm64", "clone3", call("arm64", "clone3"), actENOSYS},
		{"arm64", "socket AF_PACKET", call("arm64", "socket", unix.AF_PACKET), actEAFNOSUPPORT},
		{"arm64", "ioctl TIOCSTI", call("arm64", "ioctl", 1, ioctlTIOCSTI), actEPERM},
	}
	progs := map[string]Program{}
	for _, arch := range []string{"amd64", "arm64"} {
		p, err := Build(arch)
		if err != nil {
			t.Fatal(err)
		}
		progs[arch] = p
	}
	for _, tt := range tests {
		t.Run(tt.arch+"/"+strings.ReplaceAll(tt.name, " ", "_"), func(t *testing.T) {
			got, err := interpret(progs[tt.arch].Filter, tt.data)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("action %#x, want %#x", got, tt.want)
			}
		})
	}
}

// TestInterpretEverySyscall sweeps every syscall number with zeroed
// arguments: the denied list gets EPERM, and nothing else is refused unless a
// conditional rule says so.
func TestInterpretEverySyscall(t *testing.T) {
	for arch, spec := range archs {
		p, err := Build(arch)
		if err != nil {
			t.Fatal(err)
		}
		want := map[uint32]uint32{}
		for _, g := range denied {
			for _, name := range g.names {
				if nr, ok := lookupSysnum(spec, name); ok {
					want[nr] = actEPERM
				}
			}
		}
		// Zeroed arguments: clone3 is refused; socket(AF_UNSPEC) is not
		// in the allowed families; personality(PER_LINUX) is allowed.
		want[call(arch, "clone3").nr] = actENOSYS
		want[call(arch, "socket").nr] = actEAFNOSUPPORT
		want[call(arch, "socketpair").nr] = actEAFNOSUPPORT
		want[call(arch, "openat2").nr] = actENOSYS
		for nr := uint32(0); nr < 1024; nr++ {
			got, err := interpret(p.Filter, seccompData{nr: nr, arch: spec.audit})
			if err != nil {
				t.Fatalf("%s nr %d: %v", arch, nr, err)
			}
			expect, ok := want[nr]
			if !ok {
				expect = actAllow
			}
			if got != expect {
				t.Errorf("%s nr %d: action %#x, want %#x", arch, nr, got, expect)
			}
		}
	}
}

func TestAssemblerErrors(t *testing.T) {
	tests := []struct {
		name string
		emit func(a *assembler)
		want string
	}{
		{"undefined label", func(a *assembler) { a.jumpEq(1, "nowhere", next); a.ret(0) }, "undefined label"},
		{"backward jump", func(a *assembler) { a.mark("top"); a.loadWord(0); a.jumpEq(1, "top", next); a.ret(0) }, "backward jump"},
		{"duplicate label", func(a *assembler) { a.mark("x"); a.mark("x"); a.ret(0) }, "defined twice"},
		{"jump too far", func(a *assembler) {
			a.jumpEq(1, "far", next)
			for range 256 {
				a.loadWord(0)
			}
			a.mark("far")
			a.ret(0)
		}, "more than 255"},
		{"label past the end", func(a *assembler) { a.jumpEq(1, "end", next); a.ret(0); a.mark("end") }, "past the end"},
		{"load outside seccomp_data", func(a *assembler) { a.loadWord(64); a.ret(0) }, "outside seccomp_data"},
		{"no return at the end", func(a *assembler) { a.loadWord(0) }, "does not end with a return"},
		{"too long", func(a *assembler) {
			for range unix.BPF_MAXINSNS {
				a.loadWord(0)
			}
			a.ret(0)
		}, "the kernel allows 4096"},
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(tt.name, " ", "_"), func(t *testing.T) {
			var a assembler
			tt.emit(&a)
			if _, err := a.assemble(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("assemble() error = %v, want one containing %q", err, tt.want)
			}
		})
	}
	var a assembler
	a.jumpEq(1, "far", next)
	for range 255 {
		a.loadWord(0)
	}
	a.mark("far")
	a.ret(0)
	if _, err := a.assemble(); err != nil {
		t.Errorf("a jump of exactly 255 failed: %v", err)
	}
}

// TestInterpretConnectNotifier: the notifier stops connect on the native
// ABI and refuses AF_UNIX datagram sockets; with BrokerTCP it also stops
// listen and refuses TCP Fast Open sends; everything else passes, and
// foreign ABIs pass it (the main filter kills them).
func TestInterpretConnectNotifier(t *testing.T) {
	for _, arch := range []string{"amd64", "arm64"} {
		for _, tcp := range []bool{false, true} {
			p, err := BuildConnectNotifier(arch, NotifierOptions{BrokerTCP: tcp})
			if err != nil {
				t.Fatal(err)
			}
			foreign := call(arch, "connect")
			foreign.arch = unix.AUDIT_ARCH_I386
			// Only with BrokerTCP are these stopped or refused.
			brokered := func(act uint32) uint32 {
				if tcp {
					return act
				}
				return actAllow
			}
			eacces := uint32(unix.SECCOMP_RET_ERRNO | errnoEACCES)
			for _, c := range []struct {
				name string
				d    seccompData
				want uint32
			}{
				{"connect", call(arch, "connect", 3, 0x1000, 16), unix.SECCOMP_RET_USER_NOTIF},
				{"listen", call(arch, "listen", 3, 128), brokered(unix.SECCOMP_RET_USER_NOTIF)},
				{"sendto", call(arch, "sendto", 3, 0x1000, 10, 0x40, 0, 0), actAllow},
				{"sendto MSG_FASTOPEN", call(arch, "sendto", 3, 0x1000, 10, msgFastOpen|0x40, 0x2000, 16), brokered(unix.SECCOMP_RET_ERRNO | errnoEOPNOTSUPP)},
				{"sendto MSG_FASTOPEN, junk high word", call(arch, "sendto", 3, 0x1000, 10, 0xffffffff00000000|msgFastOpen, 0x2000, 16), brokered(unix.SECCOMP_RET_ERRNO | errnoEOPNOTSUPP)},
				{"sendmsg", call(arch, "sendmsg", 3, 0x1000, 0x4000), actAllow},
				{"sendmsg MSG_FASTOPEN", call(arch, "sendmsg", 3, 0x1000, msgFastOpen), brokered(unix.SECCOMP_RET_ERRNO | errnoEOPNOTSUPP)},
				{"sendmmsg MSG_FASTOPEN", call(arch, "sendmmsg", 3, 0x1000, 2, msgFastOpen), brokered(unix.SECCOMP_RET_ERRNO | errnoEOPNOTSUPP)},
				{"sendmmsg", call(arch, "sendmmsg", 3, 0x1000, 2, 0), actAllow},
				{"socket inet", call(arch, "socket", unix.AF_INET, unix.SOCK_STREAM), actAllow},
				{"socket inet dgram", call(arch, "socket", unix.AF_INET, unix.SOCK_DGRAM), actAllow},
				{"socket unix stream", call(arch, "socket", unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC), actAllow},
				{"socket unix seqpacket", call(arch, "socket", unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_NONBLOCK), actAllow},
				{"socket unix dgram", call(arch, "socket", unix.AF_UNIX, unix.SOCK_DGRAM), eacces},
				{"socket unix dgram, flags", call(arch, "socket", unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK), eacces},
				{"socket unix raw", call(arch, "socket", unix.AF_UNIX, unix.SOCK_RAW), eacces},
				{"socket unix dgram, junk high words", call(arch, "socket", 0xffffffff00000000|unix.AF_UNIX, 0xffffffff00000000|unix.SOCK_DGRAM), eacces},
				{"socketpair unix dgram", call(arch, "socketpair", unix.AF_UNIX, unix.SOCK_DGRAM, 0, 0x1000), eacces},
				{"socketpair unix stream", call(arch, "socketpair", unix.AF_UNIX, unix.SOCK_STREAM, 0, 0x1000), actAllow},
				{"bpf", call(arch, "bpf"), actAllow},
				{"foreign ABI", foreign, actAllow},
			} {
				got, err := interpret(p.Filter, c.d)
				if err != nil || got != c.want {
					t.Errorf("%s %s (BrokerTCP %v): got %#x (%v), want %#x", arch, c.name, tcp, got, err, c.want)
				}
			}
		}
	}
	if _, err := BuildConnectNotifier("mips", NotifierOptions{}); err == nil {
		t.Error("mips: want an error")
	}
}

// TestInterpretExecWatch: with ExecWatch the notifier also stops execve
// and execveat (the supervisor reports refused execs); without it, execs
// pass, and ExecWatch changes nothing else.
func TestInterpretExecWatch(t *testing.T) {
	for _, arch := range []string{"amd64", "arm64"} {
		for _, watch := range []bool{false, true} {
			p, err := BuildConnectNotifier(arch, NotifierOptions{ExecWatch: watch})
			if err != nil {
				t.Fatal(err)
			}
			stop := uint32(actAllow)
			if watch {
				stop = unix.SECCOMP_RET_USER_NOTIF
			}
			foreign := call(arch, "execve", 0x1000)
			foreign.arch = unix.AUDIT_ARCH_I386
			for _, c := range []struct {
				name string
				d    seccompData
				want uint32
			}{
				{"execve", call(arch, "execve", 0x1000, 0x2000, 0x3000), stop},
				{"execveat", call(arch, "execveat", 3, 0x1000, 0x2000, 0x3000, unix.AT_EMPTY_PATH), stop},
				{"connect", call(arch, "connect", 3, 0x1000, 16), unix.SECCOMP_RET_USER_NOTIF},
				{"socket unix dgram", call(arch, "socket", unix.AF_UNIX, unix.SOCK_DGRAM), unix.SECCOMP_RET_ERRNO | errnoEACCES},
				{"openat", call(arch, "openat", 3, 0x1000, 0), actAllow},
				{"foreign ABI", foreign, actAllow},
			} {
				got, err := interpret(p.Filter, c.d)
				if err != nil || got != c.want {
					t.Errorf("%s %s (ExecWatch %v): got %#x (%v), want %#x", arch, c.name, watch, got, err, c.want)
				}
			}
		}
	}
}

// TestInterpretCreateGuard: with CreateGuard the notifier stops every
// name-making call, chmod, chown and truncate, and open or openat only
// when they create, write or truncate (a read-only open never waits for
// the supervisor); without it none of them stops.
func TestInterpretCreateGuard(t *testing.T) {
	notify := uint32(unix.SECCOMP_RET_USER_NOTIF)
	for _, arch := range []string{"amd64", "arm64"} {
		for _, guard := range []bool{false, true} {
			p, err := BuildConnectNotifier(arch, NotifierOptions{CreateGuard: guard})
			if err != nil {
				t.Fatal(err)
			}
			stopped := func() uint32 {
				if guard {
					return notify
				}
				return actAllow
			}
			cases := []struct {
				name string
				d    seccompData
				want uint32
			}{
				{"openat O_RDONLY", call(arch, "openat", 3, 0x1000, unix.O_RDONLY|unix.O_CLOEXEC, 0), actAllow},
				{"openat O_RDONLY|O_NONBLOCK|O_DIRECTORY|O_NOFOLLOW", call(arch, "openat", 3, 0x1000, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0), actAllow},
				{"openat O_PATH", call(arch, "openat", 3, 0x1000, unix.O_PATH|unix.O_CLOEXEC, 0), actAllow},
				{"openat O_WRONLY|O_TRUNC", call(arch, "openat", 3, 0x1000, unix.O_WRONLY|unix.O_TRUNC, 0), stopped()},
				{"openat O_WRONLY", call(arch, "openat", 3, 0x1000, unix.O_WRONLY, 0), stopped()},
				{"openat O_RDWR (python r+)", call(arch, "openat", 3, 0x1000, unix.O_RDWR|unix.O_CLOEXEC, 0), stopped()},
				{"openat O_RDONLY|O_TRUNC", call(arch, "openat", 3, 0x1000, unix.O_RDONLY|unix.O_TRUNC, 0), stopped()},
				{"openat O_RDWR, junk high word", call(arch, "openat", 3, 0x1000, 0xffffffff00000000|unix.O_RDWR, 0), stopped()},
				{"openat O_RDONLY, junk high word", call(arch, "openat", 3, 0x1000, 0xffffffff00000000, 0), actAllow},
				{"openat O_CREAT", call(arch, "openat", 3, 0x1000, unix.O_WRONLY|unix.O_CREAT, 0o644), stopped()},
				{"openat O_CREAT, junk high word", call(arch, "openat", 3, 0x1000, 0xffffffff00000000|unix.O_CREAT, 0o644), stopped()},
				{"openat O_TMPFILE", call(arch, "openat", 3, 0x1000, unix.O_TMPFILE|unix.O_RDWR, 0o600), stopped()},
				{"bpf", call(arch, "bpf"), actAllow},
				{"connect", call(arch, "connect", 3, 0x1000, 16), notify},
			}
			for _, name := range CreateGuarded {
				if _, ok := lookupSysnum(archs[arch], name); ok {
					cases = append(cases, struct {
						name string
						d    seccompData
						want uint32
					}{name, call(arch, name, 3, 0x1000, 0o755), stopped()})
				}
			}
			if _, ok := lookupSysnum(archs[arch], "open"); ok {
				cases = append(cases, struct {
					name string
					d    seccompData
					want uint32
				}{"open O_CREAT", call(arch, "open", 0x1000, unix.O_CREAT|unix.O_WRONLY, 0o644), stopped()},
					struct {
						name string
						d    seccompData
						want uint32
					}{"open O_RDONLY", call(arch, "open", 0x1000, unix.O_RDONLY), actAllow},
					struct {
						name string
						d    seccompData
						want uint32
					}{"open O_RDWR", call(arch, "open", 0x1000, unix.O_RDWR), stopped()})
			}
			for _, c := range cases {
				got, err := interpret(p.Filter, c.d)
				if err != nil || got != c.want {
					t.Errorf("%s %s (CreateGuard %v): got %#x (%v), want %#x", arch, c.name, guard, got, err, c.want)
				}
			}
		}
	}
}
