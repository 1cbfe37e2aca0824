package profile_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/profile"
)

// TestIsPrivateAddr: every address a sandbox could use to reach this
// machine, its network or a cloud's metadata service counts as private,
// including IPv6 forms that embed an IPv4 address; public ones do not.
func TestIsPrivateAddr(t *testing.T) {
	private := []string{
		"127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.100.100.200",
		"100.64.0.1", "0.0.0.0", "0.1.2.3", "192.0.0.170", "198.18.0.1", "240.0.0.1", "255.255.255.255",
		"168.63.129.16", "224.0.0.1",
		"::1", "::", "fe80::1", "fc00::1", "fd00:ec2::254", "ff02::1",
		"::ffff:127.0.0.1", "::ffff:169.254.169.254",
		"64:ff9b::a9fe:a9fe", "64:ff9b:1::a00:1", "2002:a9fe:a9fe::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2",
	}
	public := []string{"1.1.1.1", "8.8.8.8", "203.0.113.7", "198.51.100.2", "2606:4700::1111", "2001:db8::1", "2001:4860:4860::8888"}
	for _, s := range private {
		if !profile.IsPrivateAddr(netip.MustParseAddr(s)) {
			t.Errorf("%s: want private", s)
		}
	}
	for _, s := range public {
		if profile.IsPrivateAddr(netip.MustParseAddr(s)) {
			t.Errorf("%s: want public", s)
		}
	}
}

// TestBindable: the whole filesystem and the kernel's own trees are never
// bound from the host, and the error says so.
func TestBindable(t *testing.T) {
	ws := t.TempDir()
	for _, c := range []struct {
		edit func(*profile.Spec)
		want string
	}{
		{func(s *profile.Spec) { s.Filesystem.Read = []string{"/"} }, "whole host filesystem"},
		{func(s *profile.Spec) { s.Filesystem.Write = []string{"/"} }, "whole host filesystem"},
		{func(s *profile.Spec) { s.Filesystem.Read = []string{"/dev"} }, "its own /dev"},
		{func(s *profile.Spec) { s.Filesystem.Write = []string{"/dev/sda"} }, "its own /dev"},
		{func(s *profile.Spec) { s.Filesystem.Read = []string{"/proc/1/root"} }, "its own /proc"},
		{func(s *profile.Spec) { s.Filesystem.Exec = []string{"/sys"} }, "its own /sys"},
		{func(s *profile.Spec) { s.Budgets.CPU = 1e9 }, "at most 65536 cores"},
	} {
		s := profile.Preset("workspace")
		s.Workspace = ws
		c.edit(&s)
		_, err := profile.New(s)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error saying %q, got %v", c.want, err)
		}
	}
	s := profile.Preset("workspace")
	s.Workspace = ws
	s.Filesystem.Read = []string{"/var/lib", "/devices", "/proceedings"}
	if _, err := profile.New(s); err != nil {
		t.Errorf("ordinary paths refused: %v", err)
	}
}
