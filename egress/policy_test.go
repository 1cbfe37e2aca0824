package egress

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/profile"
)

func TestParseRule(t *testing.T) {
	for _, c := range []struct {
		entry    string
		name     string
		wildcard bool
		addr     string
		ports    []uint16
		proto    string // "" means ProtoTCP
		err      string
	}{
		{entry: "example.com", name: "example.com", ports: []uint16{80, 443}},
		{entry: "Example.COM.", name: "example.com", ports: []uint16{80, 443}},
		{entry: "example.com:8443", name: "example.com", ports: []uint16{8443}},
		{entry: "*.example.com", name: "example.com", wildcard: true, ports: []uint16{80, 443}},
		{entry: "*.example.com:22", name: "example.com", wildcard: true, ports: []uint16{22}},
		{entry: "203.0.113.7", addr: "203.0.113.7", ports: []uint16{80, 443}},
		{entry: "203.0.113.7:5432", addr: "203.0.113.7", ports: []uint16{5432}},
		{entry: "[::1]:443", addr: "::1", ports: []uint16{443}},
		{entry: "2001:db8::1", addr: "2001:db8::1", ports: []uint16{80, 443}},
		{entry: "[2001:db8::1]", addr: "2001:db8::1", ports: []uint16{80, 443}},
		{entry: "[::ffff:10.0.0.1]:80", addr: "10.0.0.1", ports: []uint16{80}},
		{entry: "_svc.example.com:5000", name: "_svc.example.com", ports: []uint16{5000}},
		{entry: "[::1", err: "brackets"},
		{entry: "::1]:443", err: "brackets"},
		{entry: "[[::1]]:443", err: "brackets"},
		{entry: "example.com:0", err: "port"},
		{entry: "example.com:65536", err: "port"},
		{entry: "example.com:http", err: "port"},
		{entry: "1.2.3.4:0", err: "port 0"},
		{entry: "*.com", err: "two labels"},
		{entry: "*", err: "DNS name"},
		{entry: "a.*.example.com", err: "DNS name"},
		{entry: "exa mple.com", err: "DNS name"},
		{entry: "http://example.com", err: "not a URL"},
		{entry: "[fe80::1%eth0]:80", err: "zone"},
		{entry: "", err: "DNS name"},
		// UDP: "/udp" after an entry with its port; "/tcp" says the default.
		{entry: "ntp.example:123/udp", name: "ntp.example", ports: []uint16{123}, proto: "udp"},
		{entry: "NTP.example.:123/UDP", name: "ntp.example", ports: []uint16{123}, proto: "udp"},
		{entry: "[2001:db8::5]:5353/udp", addr: "2001:db8::5", ports: []uint16{5353}, proto: "udp"},
		{entry: "10.0.0.7:9999/udp", addr: "10.0.0.7", ports: []uint16{9999}, proto: "udp"},
		{entry: "[::ffff:10.0.0.7]:9999/udp", addr: "10.0.0.7", ports: []uint16{9999}, proto: "udp"},
		{entry: "*.example.com:443/udp", name: "example.com", wildcard: true, ports: []uint16{443}, proto: "udp"},
		{entry: "example.com/tcp", name: "example.com", ports: []uint16{80, 443}},
		{entry: "example.com:22/tcp", name: "example.com", ports: []uint16{22}},
		{entry: "[2001:db8::1]/tcp", addr: "2001:db8::1", ports: []uint16{80, 443}},
		{entry: "203.0.113.7:53/TCP", addr: "203.0.113.7", ports: []uint16{53}},
		{entry: "ntp.example/udp", err: "a UDP entry needs its port; write ntp.example:PORT/udp"},
		{entry: "*.example.com/udp", err: "write *.example.com:PORT/udp"},
		{entry: "10.0.0.7/udp", err: "write 10.0.0.7:PORT/udp"},
		{entry: "2001:db8::5/udp", err: "write [2001:db8::5]:PORT/udp"},
		{entry: "[2001:db8::5]/udp", err: "write [2001:db8::5]:PORT/udp"},
		{entry: "ntp.example:0/udp", err: "port"},
		{entry: "1.2.3.4:0/udp", err: "port 0"},
		{entry: "ntp.example:123/sctp", err: "host:port/udp"},
		{entry: "ntp.example:123/udp/udp", err: "not a URL or a path"},
		{entry: "10.0.0.0/8", err: "not a URL or a path"},
		{entry: "/udp", err: "DNS name"},
		{entry: "http://example.com/udp", err: "not a URL"},
	} {
		r, err := ParseRule(c.entry)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, ErrPolicy) {
				t.Errorf("%q: want error with %q, got %v", c.entry, c.err, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.entry, err)
			continue
		}
		var addr string
		if r.Addr.IsValid() {
			addr = r.Addr.String()
		}
		proto := c.proto
		if proto == "" {
			proto = ProtoTCP
		}
		if r.Name != c.name || r.Wildcard != c.wildcard || addr != c.addr || !equalPorts(r.Ports, c.ports) || r.Protocol != proto || r.Entry != c.entry {
			t.Errorf("%q: got %+v", c.entry, r)
		}
	}
}

func equalPorts(a, b []uint16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestCompileModes(t *testing.T) {
	if _, err := Compile(profile.NetworkSpec{Mode: profile.NetworkModeNone}); err == nil {
		t.Error("mode none compiled")
	}
	if _, err := Compile(profile.NetworkSpec{Mode: profile.NetworkModeAllow}); err == nil {
		t.Error("empty allowlist compiled")
	}
	if _, err := Compile(profile.NetworkSpec{Mode: profile.NetworkModeAll, Allow: []string{"example.com"}}); err == nil {
		t.Error("mode all with a name compiled")
	}
	p, err := Compile(profile.NetworkSpec{Mode: profile.NetworkModeAll, Allow: []string{"169.254.169.254:80"}})
	if err != nil || !p.Public() {
		t.Fatalf("mode all with a literal: %v", err)
	}
}

func TestDecide(t *testing.T) {
	allow, err := Compile(profile.NetworkSpec{Mode: profile.NetworkModeAllow, Allow: []string{
		"api.example.com", "git.example.com:22", "*.cdn.example.net:443",
		"203.0.113.9:8080", "[2001:db8::9]:443", "10.1.2.3:5432", "169.254.169.254:80",
	}})
	if err != nil {
		t.Fatal(err)
	}
	all, err := Compile(profile.NetworkSpec{Mode: profile.NetworkModeAll, Allow: []string{"10.1.2.3:5432"}})
	if err != nil {
		t.Fatal(err)
	}
	pub := "198.51.100.7"
	for _, c := range []struct {
		p      *Policy
		addr   string
		port   uint16
		names  []string
		ok     bool
		reason string
	}{
		{allow, pub, 443, []string{"api.example.com"}, true, ""},
		{allow, pub, 80, []string{"api.example.com"}, true, ""},
		{allow, pub, 22, []string{"api.example.com"}, false, "port 22 is not allowed for api.example.com; allowed: 80, 443"},
		{allow, pub, 22, []string{"git.example.com"}, true, ""},
		{allow, pub, 443, []string{"x.cdn.example.net"}, true, ""},
		{allow, pub, 443, []string{"cdn.example.net"}, false, "not in allowlist"},
		{allow, pub, 443, nil, false, "not in allowlist"},
		{allow, pub, 443, []string{"evil.example.org"}, false, "not in allowlist"},
		{allow, "203.0.113.9", 8080, nil, true, ""},
		{allow, "203.0.113.9", 80, nil, false, "port 80 is not allowed for 203.0.113.9; allowed: 8080"},
		{allow, "2001:db8::9", 443, nil, true, ""},
		{allow, "2001:db8::9", 80, nil, false, "allowed: 443"},
		{allow, "::ffff:203.0.113.9", 8080, nil, true, ""},
		// Private and metadata: only an exact literal, never a name.
		{allow, "10.1.2.3", 5432, nil, true, ""},
		{allow, "10.1.2.3", 5432, []string{"api.example.com"}, true, ""},
		{allow, "10.1.2.3", 443, []string{"api.example.com"}, false, "port 443 is not allowed for 10.1.2.3; allowed: 5432"},
		{allow, "10.9.9.9", 443, []string{"api.example.com"}, false, "10.9.9.9 is a private (RFC 1918) address"},
		{allow, "127.0.0.1", 443, []string{"api.example.com"}, false, "a loopback address"},
		{allow, "169.254.169.254", 80, nil, true, ""},
		{allow, "169.254.169.254", 443, nil, false, "port 443 is not allowed"},
		{allow, "fd00:ec2::254", 80, nil, false, "a cloud metadata address"},
		{allow, "100.100.100.200", 80, nil, false, "a cloud metadata address"},
		{allow, "100.64.1.1", 443, nil, false, "CGNAT"},
		{allow, "fe80::1", 443, nil, false, "link-local"},
		{allow, "fd12::1", 443, nil, false, "unique local"},
		{allow, "224.0.0.1", 443, nil, false, "multicast"},
		{allow, "0.0.0.0", 443, nil, false, "unspecified"},
		{allow, "168.63.129.16", 80, nil, false, "cloud metadata"},
		// Mode all: public anything; private only as literals.
		{all, pub, 22, nil, true, ""},
		{all, "2001:db8::1", 25, nil, true, ""},
		{all, "169.254.169.254", 80, nil, false, "a cloud metadata address"},
		{all, "10.1.2.3", 5432, nil, true, ""},
		{all, "10.1.2.3", 22, nil, false, "port 22 is not allowed for 10.1.2.3"},
		{all, "127.0.0.1", 80, nil, false, "a loopback address"},
	} {
		ok, reason := c.p.Decide(netip.MustParseAddr(c.addr), c.port, c.names)
		if ok != c.ok || !strings.Contains(reason, c.reason) {
			t.Errorf("Decide(%s, %d, %v) = %v %q; want %v %q", c.addr, c.port, c.names, ok, reason, c.ok, c.reason)
		}
	}
}

// TestDecideUDP: UDP is allowed by "/udp" entries only, under the same
// address checks as TCP; a TCP entry never allows UDP, nor the other way
// round, and a refusal says which entry would allow it.
func TestDecideUDP(t *testing.T) {
	allow, err := Compile(profile.NetworkSpec{Mode: profile.NetworkModeAllow, Allow: []string{
		"ntp.example:123/udp", "api.example.com", "both.example:5000", "both.example:5353/udp",
		"*.quic.example:443/udp", "[2001:db8::5]:5353/udp", "203.0.113.9:8080",
		"10.0.0.7:9999/udp", "10.1.2.3:5432", "169.254.169.254:53/udp",
	}})
	if err != nil {
		t.Fatal(err)
	}
	all, err := Compile(profile.NetworkSpec{Mode: profile.NetworkModeAll, Allow: []string{"10.1.2.3:5432", "10.0.0.53:53/udp"}})
	if err != nil {
		t.Fatal(err)
	}
	pub := "198.51.100.7"
	for _, c := range []struct {
		p      *Policy
		udp    bool
		addr   string
		port   uint16
		names  []string
		ok     bool
		reason string
	}{
		{allow, true, pub, 123, []string{"ntp.example"}, true, ""},
		{allow, true, pub, 124, []string{"ntp.example"}, false, "port 124 is not allowed for ntp.example; allowed: 123/udp"},
		{allow, false, pub, 123, []string{"ntp.example"}, false, "ntp.example has UDP entries only (123/udp); TCP needs an entry without /udp"},
		// A TCP entry does not allow UDP, not even on its own port.
		{allow, true, pub, 443, []string{"api.example.com"}, false, "UDP other than DNS needs an entry like api.example.com:443/udp; api.example.com has TCP entries only (80, 443)"},
		{allow, true, pub, 5000, []string{"both.example"}, false, "port 5000 is not allowed for both.example; allowed: 5353/udp"},
		{allow, true, pub, 5353, []string{"both.example"}, true, ""},
		{allow, false, pub, 5000, []string{"both.example"}, true, ""},
		{allow, false, pub, 5353, []string{"both.example"}, false, "port 5353 is not allowed for both.example; allowed: 5000"},
		{allow, true, pub, 443, []string{"a.quic.example"}, true, ""},
		{allow, true, pub, 443, []string{"quic.example"}, false, "not in allowlist"},
		{allow, false, pub, 443, []string{"a.quic.example"}, false, "a.quic.example has UDP entries only (443/udp)"},
		// Names the gateway did not resolve allow nothing.
		{allow, true, pub, 123, nil, false, "not in allowlist"},
		{allow, true, pub, 123, []string{"evil.example"}, false, "not in allowlist"},
		// Literals, public and private, each for its own protocol.
		{allow, true, "2001:db8::5", 5353, nil, true, ""},
		{allow, true, "2001:db8::5", 5354, nil, false, "port 5354 is not allowed for 2001:db8::5; allowed: 5353/udp"},
		{allow, false, "2001:db8::5", 5353, nil, false, "2001:db8::5 has UDP entries only (5353/udp)"},
		{allow, true, "203.0.113.9", 8080, nil, false, "UDP other than DNS needs an entry like 203.0.113.9:8080/udp"},
		{allow, true, "10.0.0.7", 9999, nil, true, ""},
		{allow, true, "::ffff:10.0.0.7", 9999, nil, true, ""},
		{allow, true, "10.0.0.7", 9999, []string{"ntp.example"}, true, ""},
		{allow, true, "10.0.0.7", 53, nil, false, "port 53 is not allowed for 10.0.0.7; allowed: 9999/udp"},
		{allow, false, "10.0.0.7", 9999, nil, false, "10.0.0.7 has UDP entries only (9999/udp)"},
		{allow, true, "10.1.2.3", 5432, nil, false, "UDP other than DNS needs an entry like 10.1.2.3:5432/udp; 10.1.2.3 has TCP entries only (5432)"},
		{allow, true, "169.254.169.254", 53, nil, true, ""},
		{allow, false, "169.254.169.254", 53, nil, false, "169.254.169.254 has UDP entries only (53/udp)"},
		// A name never leads to a private address, for UDP either.
		{allow, true, "10.9.9.9", 123, []string{"ntp.example"}, false, "10.9.9.9 is a private (RFC 1918) address; only an exact literal entry can allow it"},
		{allow, true, "127.0.0.1", 123, []string{"ntp.example"}, false, "a loopback address"},
		{allow, true, "fd00:ec2::254", 123, []string{"ntp.example"}, false, "a cloud metadata address"},
		{allow, true, "224.0.0.251", 5353, nil, false, "a multicast address"},
		// Mode all relays UDP to every public address; literal exceptions
		// keep to their protocol.
		{all, true, pub, 443, nil, true, ""},
		{all, true, "2001:db8::1", 3478, nil, true, ""},
		{all, true, "10.0.0.53", 53, nil, true, ""},
		{all, false, "10.0.0.53", 53, nil, false, "10.0.0.53 has UDP entries only (53/udp)"},
		{all, true, "10.1.2.3", 5432, nil, false, "UDP other than DNS needs an entry like 10.1.2.3:5432/udp"},
		{all, false, "10.1.2.3", 5432, nil, true, ""},
		{all, true, "169.254.169.254", 53, nil, false, "a cloud metadata address"},
	} {
		decide, proto := c.p.Decide, "tcp"
		if c.udp {
			decide, proto = c.p.DecideUDP, "udp"
		}
		ok, reason := decide(netip.MustParseAddr(c.addr), c.port, c.names)
		if ok != c.ok || !strings.Contains(reason, c.reason) {
			t.Errorf("%s %s:%d %v = %v %q; want %v %q", proto, c.addr, c.port, c.names, ok, reason, c.ok, c.reason)
		}
	}
}

func TestCompileUDP(t *testing.T) {
	if _, err := Compile(profile.NetworkSpec{Mode: profile.NetworkModeAll, Allow: []string{"ntp.example:123/udp"}}); err == nil {
		t.Error("mode all with a UDP name compiled")
	}
	_, err := Compile(profile.NetworkSpec{Mode: profile.NetworkModeAllow, Allow: []string{"api.example.com", "ntp.example/udp"}})
	if err == nil || !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), `"ntp.example/udp": a UDP entry needs its port; write ntp.example:PORT/udp`) {
		t.Errorf("port-less UDP entry: %v", err)
	}
	// A UDP entry's name is answered by the DNS server like a TCP one's.
	p, err := Compile(profile.NetworkSpec{Mode: profile.NetworkModeAllow, Allow: []string{"ntp.example:123/udp", "*.quic.example:443/udp"}})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"ntp.example": true, "a.quic.example": true, "quic.example": false} {
		if got := p.AllowsName(name); got != want {
			t.Errorf("AllowsName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestAllowsName(t *testing.T) {
	p, err := Compile(profile.NetworkSpec{Mode: profile.NetworkModeAllow, Allow: []string{"api.example.com:8443", "*.example.net", "203.0.113.9"}})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{
		"api.example.com": true, "API.Example.com.": true, "example.com": false, "x.api.example.com": false,
		"a.example.net": true, "a.b.example.net": true, "example.net": false, "evilexample.net": false,
		"203.0.113.9": false, "": false, "a..example.net": false,
	} {
		if got := p.AllowsName(name); got != want {
			t.Errorf("AllowsName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestAddressClassCoversProfile: every address the profile calls private
// is one the gateway refuses, and the other way round.
func TestAddressClassCoversProfile(t *testing.T) {
	for _, s := range []string{
		"127.0.0.1", "10.0.0.1", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1",
		"100.100.100.200", "0.0.0.0", "224.0.0.251", "255.255.255.255", "198.18.0.1", "192.0.0.8",
		"::1", "::", "fe80::1", "fd00:ec2::254", "fc00::1", "ff02::1", "64:ff9b::a00:1", "::ffff:127.0.0.1",
		"8.8.8.8", "198.51.100.1", "2001:db8::1", "2606:4700::1111",
	} {
		a := netip.MustParseAddr(s)
		if got, want := AddressClass(a) != "", profile.IsPrivateAddr(a); got != want {
			t.Errorf("%s: gateway refuses %v, profile private %v", s, got, want)
		}
	}
}
