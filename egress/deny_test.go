package egress

import (
	"net/netip"
	"testing"

	"github.com/airlockhq/airlock/profile"
)

// Deny entries refuse before the allowlist, in both modes; without a port
// they cover every port, and a name denied on every port is not answered.
func TestPolicyDeny(t *testing.T) {
	pub := netip.MustParseAddr("203.0.113.7")
	loop := netip.MustParseAddr("127.0.0.1")
	tests := []struct {
		name  string
		spec  profile.NetworkSpec
		addr  netip.Addr
		port  uint16
		names []string
		ok    bool
	}{
		{"literal over allow", profile.NetworkSpec{Mode: "allow", Allow: []string{"127.0.0.1:8080"}, Deny: []string{"127.0.0.1:8080"}}, loop, 8080, nil, false},
		{"literal other port", profile.NetworkSpec{Mode: "allow", Allow: []string{"127.0.0.1:8081"}, Deny: []string{"127.0.0.1:8080"}}, loop, 8081, nil, true},
		{"literal under all", profile.NetworkSpec{Mode: "all", Deny: []string{"203.0.113.7"}}, pub, 22, nil, false},
		{"all without deny", profile.NetworkSpec{Mode: "all", Deny: []string{"203.0.113.8"}}, pub, 22, nil, true},
		{"name over allow", profile.NetworkSpec{Mode: "allow", Allow: []string{"*.example.com"}, Deny: []string{"evil.example.com"}}, pub, 443, []string{"evil.example.com"}, false},
		{"sibling name", profile.NetworkSpec{Mode: "allow", Allow: []string{"*.example.com"}, Deny: []string{"evil.example.com"}}, pub, 443, []string{"good.example.com"}, true},
		{"shared address", profile.NetworkSpec{Mode: "allow", Allow: []string{"*.example.com"}, Deny: []string{"evil.example.com"}}, pub, 443, []string{"good.example.com", "evil.example.com"}, false},
		{"wildcard under all", profile.NetworkSpec{Mode: "all", Deny: []string{"*.evil.test:443"}}, pub, 443, []string{"a.b.evil.test"}, false},
		{"wildcard other port", profile.NetworkSpec{Mode: "all", Deny: []string{"*.evil.test:443"}}, pub, 80, []string{"a.b.evil.test"}, true},
	}
	for _, tt := range tests {
		p, err := Compile(tt.spec)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		ok, why := p.Decide(tt.addr, tt.port, tt.names)
		if ok != tt.ok {
			t.Errorf("%s: Decide = %v (%s), want %v", tt.name, ok, why, tt.ok)
		}
		if uok, _ := p.DecideUDP(tt.addr, tt.port, tt.names); !tt.ok && uok {
			t.Errorf("%s: a deny entry does not refuse UDP", tt.name)
		}
	}
	p, err := Compile(profile.NetworkSpec{Mode: "all", Deny: []string{"evil.test", "porty.test:443"}})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"evil.test": false, "EVIL.test.": false, "porty.test": true, "good.test": true} {
		if got := p.AllowsName(name); got != want {
			t.Errorf("AllowsName(%q) = %v, want %v", name, got, want)
		}
	}
	for _, bad := range []string{"evil.test/udp", "*.com", "http://x"} {
		if _, err := ParseDeny(bad); err == nil {
			t.Errorf("ParseDeny(%q) accepted", bad)
		}
	}
}
