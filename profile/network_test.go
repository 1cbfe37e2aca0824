package profile

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestNetworkAllowProtocols: network.allow takes host:port/udp entries
// (and /tcp, the default, spelled out), keeps one spelling of each, and
// refuses a UDP entry without a port with the fix in the message.
func TestNetworkAllowProtocols(t *testing.T) {
	ws := t.TempDir()
	newProfile := func(mode string, allow ...string) (*Profile, error) {
		s := Preset("workspace")
		s.Workspace = ws
		s.Network = NetworkSpec{Mode: mode, Allow: allow}
		return New(s)
	}

	p, err := newProfile(NetworkModeAllow, "ntp.example:123/udp", "api.example.com:443/TCP", "[2001:db8::5]:5353/UDP",
		"*.example.com:443/udp", "example.org/tcp", "10.0.0.7:9999/udp", "10.0.0.5:5432/tcp")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ntp.example:123/udp", "api.example.com:443", "[2001:db8::5]:5353/udp",
		"*.example.com:443/udp", "example.org", "10.0.0.7:9999/udp", "10.0.0.5:5432"}
	if got := p.Spec().Network.Allow; !slices.Equal(got, want) {
		t.Errorf("allow = %q; want %q", got, want)
	}
	if _, err := newProfile(NetworkModeAll, "10.0.0.53:53/udp", "[fd00::1]:53/udp"); err != nil {
		t.Errorf("mode all with UDP literals: %v", err)
	}

	for _, c := range []struct {
		mode, entry, fixHas string
	}{
		{NetworkModeAllow, "ntp.example/udp", "a UDP entry needs its port; write ntp.example:PORT/udp"},
		{NetworkModeAllow, "*.example.com/udp", "write *.example.com:PORT/udp"},
		{NetworkModeAllow, "2001:db8::5/udp", "write [2001:db8::5]:PORT/udp"},
		{NetworkModeAllow, "[2001:db8::5]/udp", "write [2001:db8::5]:PORT/udp"},
		{NetworkModeAllow, "10.0.0.7/udp", "write 10.0.0.7:PORT/udp"},
		{NetworkModeAllow, "ntp.example:ntp/udp", "port must be a number"},
		{NetworkModeAllow, "ntp.example:123/sctp", "host:port/udp for UDP"},
		{NetworkModeAllow, "/udp", "empty entry"},
		{NetworkModeAll, "ntp.example:123/udp", "IP literals"},
		{NetworkModeAll, "10.0.0.53/udp", "write 10.0.0.53:PORT/udp"},
	} {
		_, err := newProfile(c.mode, c.entry)
		var fe *FieldError
		if !errors.As(err, &fe) || !errors.Is(err, ErrInvalid) || fe.Field != "network.allow" || fe.Value != c.entry || !strings.Contains(err.Error(), c.fixHas) {
			t.Errorf("%s %q: err = %v; want a network.allow error naming the entry and saying %q", c.mode, c.entry, err, c.fixHas)
		}
	}

	// "/tcp" changes nothing, fingerprint included.
	a, err := newProfile(NetworkModeAllow, "api.example.com:443")
	if err != nil {
		t.Fatal(err)
	}
	b, err := newProfile(NetworkModeAllow, "api.example.com:443/tcp")
	if err != nil {
		t.Fatal(err)
	}
	if a.Fingerprint() != b.Fingerprint() {
		t.Error("host:port and host:port/tcp have different fingerprints")
	}
	c, err := newProfile(NetworkModeAllow, "api.example.com:443/udp")
	if err != nil {
		t.Fatal(err)
	}
	if a.Fingerprint() == c.Fingerprint() {
		t.Error("host:port and host:port/udp have the same fingerprint")
	}

	// network.connect is a TCP connection: a UDP entry does not allow it.
	for _, tt := range []struct {
		target string
		want   Access
	}{
		{"ntp.example:123", AccessGated},
		{"a.example.com:443", AccessGated},
		{"10.0.0.7:9999", AccessDeny},
		{"[2001:db8::5]:5353", AccessGated},
		{"api.example.com:443", AccessAllow},
		{"example.org:443", AccessAllow},
		{"10.0.0.5:5432", AccessAllow},
	} {
		if got := p.Access(KindNetworkConnect, tt.target); got != tt.want {
			t.Errorf("Access(network.connect, %s) = %v; want %v", tt.target, got, tt.want)
		}
	}
}

// TestAccessIgnoresUDPEntries: the gate's network.connect is TCP, which a
// UDP entry for the same host and port never allows.
func TestAccessIgnoresUDPEntries(t *testing.T) {
	s := Preset("workspace")
	s.Workspace = t.TempDir()
	s.Network = NetworkSpec{Mode: NetworkModeAllow, Allow: []string{"ntp.example:123/udp", "api.example:443"}}
	p, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Access("network.connect", "ntp.example:123"); got == AccessAllow {
		t.Errorf("network.connect ntp.example:123 allowed by a UDP entry")
	}
	if got := p.Access("network.connect", "api.example:443"); got != AccessAllow {
		t.Errorf("network.connect api.example:443: %v, want allow", got)
	}
}
