//go:build linux

package seccomp

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// BuildHostSocketIoctls compiles the filter of a run whose connect
// broker hands the sandbox sockets of the host's network namespace (see
// BuildConnectNotifier). The kernel answers an interface ioctl in the
// namespace of the socket it is made on, so on such a socket
// SIOCGIFCONF lists the host's interfaces, SIOCGIFADDR and SIOCGIFHWADDR
// give their addresses, SIOCGARP the host's neighbours, SIOCGIWESSID the
// wireless network it is on. Which descriptor holds a host socket
// changes under the filter's feet (dup2, and the broker's own swaps), so
// the filter refuses these ioctls, with EPERM, on every descriptor:
//
//   - 0x8910-0x89ff, the netdevice, routing, ARP, bridge, bonding, VLAN
//     and device-private ioctls (linux/sockios.h), except SIOCOUTQNSD,
//     which reads the calling socket's own queue;
//   - 0x8b00-0x8bff, the wireless extensions (linux/wireless.h).
//
// The per-socket ioctls below 0x8910 (FIONREAD, SIOCATMARK, SIOCGSTAMP,
// ...) pass. Programs that want the sandbox's own interfaces read them
// over netlink, which a NETLINK_ROUTE socket (always the sandbox's
// namespace) answers: getifaddrs, ip(8), Go's net.Interfaces. Foreign
// ABIs are killed, as the main filter (Build) does.
func BuildHostSocketIoctls(arch string) (Program, error) {
	spec, ok := archs[arch]
	if !ok {
		return Program{}, fmt.Errorf("seccomp: build host socket ioctl filter for %q: %w", arch, ErrUnsupportedArch)
	}
	const (
		lRefuse label = "refuse"
		lPass   label = "pass"
		lDie    label = "die"
	)
	var a assembler
	a.loadWord(offArch)
	a.jumpEq(spec.audit, next, lDie)
	a.loadWord(offNr)
	if spec.x32 {
		a.jumpSet(x32SyscallBit, lDie, next)
	}
	a.jumpEq(mustSysnum(arch, spec, "ioctl"), next, lPass)
	// The kernel reads cmd as a 32-bit unsigned int. Classic BPF has no
	// range compare this package emits, so the bits decide: 0x89XX and
	// 0x8bXX are the ones with bits 15, 11 and 8 set and every other bit
	// above the low byte clear but bit 9 (which tells 0x8b from 0x89).
	a.loadWord(offArgLow(1))
	a.jumpSet(0xffff7400, lPass, next)
	a.jumpSet(0x8000, next, lPass)
	a.jumpSet(0x0800, next, lPass)
	a.jumpSet(0x0100, next, lPass)
	a.jumpSet(0x0200, lRefuse, next) // 0x8bXX: wireless extensions
	a.jumpSet(0x00f0, next, lPass)   // 0x8900-0x890f: per-socket
	a.jumpEq(ioctlSIOCOUTQNSD, lPass, lRefuse)
	a.mark(lRefuse)
	a.ret(unix.SECCOMP_RET_ERRNO | errnoEPERM)
	a.mark(lPass)
	a.ret(unix.SECCOMP_RET_ALLOW)
	a.mark(lDie)
	a.ret(unix.SECCOMP_RET_KILL_PROCESS)
	filter, err := a.assemble()
	if err != nil {
		return Program{}, fmt.Errorf("seccomp: build host socket ioctl filter for %s: %w", arch, err)
	}
	return Program{Arch: arch, Filter: filter}, nil
}

// ioctlSIOCOUTQNSD reads a socket's own unsent bytes; the same on x86_64
// and asm-generic.
const ioctlSIOCOUTQNSD = 0x894b
