//go:build linux

package seccomp

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestInterpretHostSocketIoctls: every netdevice and wireless ioctl is
// refused, the per-socket ones and every other ioctl and syscall pass,
// foreign ABIs die.
func TestInterpretHostSocketIoctls(t *testing.T) {
	for _, arch := range []string{"amd64", "arm64"} {
		p, err := BuildHostSocketIoctls(arch)
		if err != nil {
			t.Fatal(err)
		}
		ioctl := func(cmd uint64) seccompData { return call(arch, "ioctl", 3, cmd, 0x1000) }
		refused := []uint64{
			unix.SIOCGIFNAME, unix.SIOCGIFCONF, unix.SIOCGIFFLAGS, unix.SIOCGIFADDR, unix.SIOCGIFNETMASK,
			unix.SIOCGIFHWADDR, unix.SIOCGIFINDEX, unix.SIOCGIFMTU, unix.SIOCGIFCOUNT, unix.SIOCETHTOOL,
			unix.SIOCGMIIPHY, unix.SIOCGARP, unix.SIOCGIFVLAN, unix.SIOCGSKNS, unix.SIOCBRADDBR,
			unix.SIOCGHWTSTAMP, unix.SIOCDEVPRIVATE, unix.SIOCPROTOPRIVATE, 0x89ff,
			0x8b01 /* SIOCGIWNAME */, 0x8b1b /* SIOCGIWESSID */, 0x8bff,
			0xffffffff00008912, // junk in the high word: the kernel reads 32 bits
		}
		passed := []uint64{
			unix.SIOCOUTQNSD, unix.SIOCATMARK, unix.SIOCGSTAMP, unix.SIOCGPGRP, 0x890f,
			0x541b /* FIONREAD */, unix.TIOCGWINSZ, unix.TCGETS, 0x8a12, 0x8812, 0x9912, 0x18912, 0x80008912, 0x8900,
		}
		for _, cmd := range refused {
			if got, err := interpret(p.Filter, ioctl(cmd)); err != nil || got != actEPERM {
				t.Errorf("%s ioctl %#x: got %#x (%v), want EPERM", arch, cmd, got, err)
			}
		}
		for _, cmd := range passed {
			if got, err := interpret(p.Filter, ioctl(cmd)); err != nil || got != actAllow {
				t.Errorf("%s ioctl %#x: got %#x (%v), want allow", arch, cmd, got, err)
			}
		}
		for _, d := range []seccompData{call(arch, "socket", unix.AF_INET, unix.SOCK_STREAM), call(arch, "connect", 3)} {
			if got, err := interpret(p.Filter, d); err != nil || got != actAllow {
				t.Errorf("%s syscall %d: got %#x (%v), want allow", arch, d.nr, got, err)
			}
		}
		foreign := ioctl(unix.SIOCGIFCONF)
		foreign.arch = unix.AUDIT_ARCH_I386
		if got, _ := interpret(p.Filter, foreign); got != actKill {
			t.Errorf("%s foreign ABI: got %#x, want kill", arch, got)
		}
	}
	if _, err := BuildHostSocketIoctls("mips"); err == nil {
		t.Error("mips: want an error")
	}
}
