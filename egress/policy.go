package egress

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/airlockhq/airlock/profile"
)

// defaultPorts are the ports an allowlist entry without ":port" allows:
// HTTP and HTTPS only. A service on any other port has to be named with
// its port, so "github.com" does not open SSH or anything else on it.
var defaultPorts = []uint16{80, 443}

// DefaultPortsText is how the default ports read in messages and docs.
const DefaultPortsText = "80, 443"

// ErrPolicy is the class of errors for an allowlist that cannot be
// compiled.
var ErrPolicy = errors.New("egress: invalid network policy")

// Rule is one compiled allowlist entry.
type Rule struct {
	// Entry is the entry as written in the profile.
	Entry string
	// Protocol is ProtoTCP, or ProtoUDP for an entry ending in "/udp". A
	// rule allows its own protocol only.
	Protocol string
	// Name is a lower-case DNS name without the trailing dot, or the
	// suffix of a wildcard; empty for an address rule.
	Name string
	// Wildcard: Name is a suffix and the rule matches every name strictly
	// below it ("*.example.com" matches a.example.com and a.b.example.com,
	// not example.com).
	Wildcard bool
	// Addr is the literal address of an address rule.
	Addr netip.Addr
	// Ports the rule allows; never empty (a TCP entry without a port gets
	// 80 and 443; a UDP entry always names its port).
	Ports []uint16
}

func (r Rule) matchesName(name string) bool {
	if r.Name == "" {
		return false
	}
	if r.Wildcard {
		return strings.HasSuffix(name, "."+r.Name)
	}
	return name == r.Name
}

// Policy decides what the sandbox may reach. It is immutable and safe for
// concurrent use.
type Policy struct {
	rules []Rule
	// public: mode "all": any name, and any public address on any port.
	public bool
	// deny are the network deny entries (deny.go), checked first.
	deny []Rule
	// spec is what it was compiled from: a gateway in another process
	// compiles the same Policy from it (egress/remote).
	spec profile.NetworkSpec
}

// Compile builds the Policy of a profile's network settings.
//
// Mode "allow" lists entries: exact DNS names ("api.example.com"),
// wildcards ("*.example.com", names strictly below the suffix), and IPv4
// or IPv6 literals ("203.0.113.7", "2001:db8::1", "[2001:db8::1]:8443"),
// each with an optional ":port". An entry without a port allows TCP ports
// 80 and 443 only. An entry is TCP ("/tcp" may be written to say so)
// unless it ends in "/udp": "ntp.example:123/udp",
// "[2001:db8::5]:5353/udp". A UDP entry must name its port, and allows
// UDP to that port only; a TCP entry never allows UDP.
//
// Mode "all" allows every name and every public address on every port,
// TCP and UDP; its entries, if any, must be IP literals: they are the
// private or metadata addresses that stay reachable, each for its own
// protocol and port.
//
// In both modes a private, loopback, link-local, CGNAT, ULA, multicast or
// cloud-metadata address is reachable only through a literal entry for
// that exact address (and port and protocol), never through a name.
func Compile(n profile.NetworkSpec) (*Policy, error) {
	p := &Policy{spec: profile.NetworkSpec{Mode: n.Mode, Allow: slices.Clone(n.Allow), Deny: slices.Clone(n.Deny)}}
	switch n.Mode {
	case profile.NetworkModeAllow:
		if len(n.Allow) == 0 {
			return nil, fmt.Errorf("%w: mode allow with an empty allowlist; list host[:port] entries or use mode none", ErrPolicy)
		}
	case profile.NetworkModeAll:
		p.public = true
	default:
		return nil, fmt.Errorf("%w: mode %q has no egress; use allow or all", ErrPolicy, n.Mode)
	}
	for _, e := range n.Allow {
		r, err := ParseRule(e)
		if err != nil {
			return nil, err
		}
		if p.public && r.Name != "" {
			return nil, fmt.Errorf("%w: %q: with network mode all, entries may only be IP literals (private or metadata addresses to keep reachable)", ErrPolicy, e)
		}
		p.rules = append(p.rules, r)
	}
	for _, e := range n.Deny {
		r, err := ParseDeny(e)
		if err != nil {
			return nil, err
		}
		p.deny = append(p.deny, r)
	}
	return p, nil
}

// ParseRule compiles one allowlist entry: HOST, HOST:PORT or
// HOST:PORT/udp, where HOST is a DNS name, a *.suffix wildcard or an IP
// literal (in brackets when a port follows an IPv6 address). "/tcp" may
// follow a TCP entry and changes nothing.
func ParseRule(entry string) (Rule, error) {
	bad := func(why string) (Rule, error) {
		return Rule{}, fmt.Errorf("%w: %q: %s", ErrPolicy, entry, why)
	}
	if strings.Contains(entry, "://") {
		return bad("write host[:port], not a URL or a path")
	}
	r := Rule{Entry: entry, Protocol: ProtoTCP}
	hostPort := entry
	if i := strings.LastIndexByte(entry, '/'); i >= 0 {
		switch proto := strings.ToLower(entry[i+1:]); proto {
		case ProtoTCP, ProtoUDP:
			r.Protocol, hostPort = proto, entry[:i]
		default:
			return bad("write host[:port] (TCP) or host:port/udp, not a URL or a path")
		}
	}
	if strings.Contains(hostPort, "/") {
		return bad("write host[:port] (TCP) or host:port/udp, not a URL or a path")
	}
	if strings.Count(hostPort, "[") != strings.Count(hostPort, "]") || strings.Count(hostPort, "[") > 1 {
		return bad("an IPv6 literal goes in one pair of brackets: [2001:db8::1] or [2001:db8::1]:443")
	}
	// needsPort refuses a UDP entry without a port: 80 and 443 are a
	// default for the web, and UDP has no such default.
	needsPort := func(host string) (Rule, error) {
		return bad(fmt.Sprintf("a UDP entry needs its port; write %s/udp", net.JoinHostPort(host, "PORT")))
	}
	if ap, err := netip.ParseAddrPort(hostPort); err == nil {
		if ap.Port() == 0 {
			return bad("port 0 cannot be connected to")
		}
		if ap.Addr().Zone() != "" {
			return bad("an address with a zone (%eth0) cannot be reached from the sandbox")
		}
		r.Addr, r.Ports = ap.Addr().Unmap(), []uint16{ap.Port()}
		return r, nil
	}
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(hostPort, "["), "]")); err == nil {
		if a.Zone() != "" {
			return bad("an address with a zone (%eth0) cannot be reached from the sandbox")
		}
		if r.Protocol == ProtoUDP {
			return needsPort(a.Unmap().String())
		}
		r.Addr, r.Ports = a.Unmap(), defaultPorts
		return r, nil
	}
	host := hostPort
	r.Ports = defaultPorts
	i := strings.LastIndexByte(hostPort, ':')
	if i >= 0 {
		host = hostPort[:i]
		n, err := strconv.ParseUint(hostPort[i+1:], 10, 16)
		if err != nil || n == 0 {
			return bad("the port must be a number from 1 to 65535, like :443")
		}
		r.Ports = []uint16{uint16(n)}
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		r.Wildcard = true
		host = rest
	}
	if !validName(host) {
		return bad("write a DNS name, *.suffix, or an IP literal ([2001:db8::1]:443 for IPv6 with a port)")
	}
	if r.Wildcard && !strings.Contains(host, ".") {
		return bad("a wildcard must keep at least two labels (*.example.com); use network mode all for everything")
	}
	if r.Protocol == ProtoUDP && i < 0 {
		return needsPort(strings.TrimSuffix(strings.ToLower(hostPort), "."))
	}
	r.Name = host
	return r, nil
}

// validName accepts LDH names (plus "_", used by service names) of at
// most 253 characters with labels of 1 to 63.
func validName(name string) bool {
	if name == "" || len(name) > 253 {
		return false
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// Public reports whether the policy is network mode "all".
func (p *Policy) Public() bool { return p.public }

// Rules returns the compiled entries.
func (p *Policy) Rules() []Rule { return slices.Clone(p.rules) }

// AllowsName reports whether the DNS server answers name (with or without
// the trailing dot, any case).
func (p *Policy) AllowsName(name string) bool {
	name = canonicalName(name)
	if !validName(name) || p.deniesName(name) {
		return false
	}
	if p.public {
		return true
	}
	for _, r := range p.rules {
		if r.matchesName(name) {
			return true
		}
	}
	return false
}

// Spec is the network settings the Policy was compiled from: Compile of
// it gives the same Policy.
func (p *Policy) Spec() profile.NetworkSpec {
	return profile.NetworkSpec{Mode: p.spec.Mode, Allow: slices.Clone(p.spec.Allow), Deny: slices.Clone(p.spec.Deny)}
}

// KeepsAnswer reports whether an address the resolver returned may be
// given to the sandbox: a public one, or one allowed as a literal.
func (p *Policy) KeepsAnswer(a netip.Addr) bool {
	if AddressClass(a) == "" {
		return true
	}
	for _, r := range p.rules {
		if r.Addr.IsValid() && r.Addr == a.Unmap() {
			return true
		}
	}
	return false
}

// Decide says whether the sandbox may open a TCP connection to
// addr:port. names are the allowed names the gateway resolved to addr
// during the run. When it refuses, reason says why in words an agent can
// act on.
func (p *Policy) Decide(addr netip.Addr, port uint16, names []string) (ok bool, reason string) {
	return p.decide(ProtoTCP, addr, port, names)
}

// DecideUDP says whether the gateway relays UDP datagrams from the
// sandbox to addr:port, the same way Decide does for TCP: only "/udp"
// entries allow UDP (and, in mode "all", every public address does).
func (p *Policy) DecideUDP(addr netip.Addr, port uint16, names []string) (ok bool, reason string) {
	return p.decide(ProtoUDP, addr, port, names)
}

func (p *Policy) decide(proto string, addr netip.Addr, port uint16, names []string) (ok bool, reason string) {
	addr = addr.Unmap()
	if entry := p.denied(addr, port, names); entry != "" {
		return false, "denied by network.deny " + entry + " (a deny rule of the workspace)"
	}
	// The ports of the rules that match the destination, for a refusal
	// to list: same for this protocol, other for the other one.
	var same, other []uint16
	collect := func(r Rule) bool {
		if r.Protocol != proto {
			other = append(other, r.Ports...)
			return false
		}
		same = append(same, r.Ports...)
		return slices.Contains(r.Ports, port)
	}
	for _, r := range p.rules {
		if r.Addr.IsValid() && r.Addr == addr && collect(r) {
			return true, ""
		}
	}
	if class := AddressClass(addr); class != "" {
		if len(same) == 0 && len(other) == 0 {
			return false, fmt.Sprintf("%s is %s; only an exact literal entry can allow it", addr, class)
		}
		return false, refusal(proto, addr.String(), port, same, other)
	}
	if p.public {
		return true, ""
	}
	for _, name := range names {
		for _, r := range p.rules {
			if r.matchesName(name) && collect(r) {
				return true, ""
			}
		}
	}
	if len(same) == 0 && len(other) == 0 {
		return false, "not in allowlist"
	}
	host := addr.String()
	if len(names) > 0 {
		host = names[0]
	}
	return false, refusal(proto, host, port, same, other)
}

// refusal says why port is refused on a host whose entries allow the
// ports same (of the protocol asked for) and other (of the other one).
func refusal(proto, host string, port uint16, same, other []uint16) string {
	switch {
	case len(same) > 0:
		return fmt.Sprintf("port %d is not allowed for %s; allowed: %s", port, host, portsText(proto, same))
	case proto == ProtoUDP:
		return fmt.Sprintf("UDP other than DNS needs an entry like %s/udp; %s has TCP entries only (%s)",
			net.JoinHostPort(host, strconv.Itoa(int(port))), host, portsText(ProtoTCP, other))
	default:
		return fmt.Sprintf("%s has UDP entries only (%s); TCP needs an entry without /udp", host, portsText(ProtoUDP, other))
	}
}

// portsText lists ports as an agent would write them: "80, 443" for TCP,
// "53/udp, 123/udp" for UDP.
func portsText(proto string, ports []uint16) string {
	ports = slices.Clone(ports)
	slices.Sort(ports)
	ports = slices.Compact(ports)
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = strconv.Itoa(int(p))
		if proto == ProtoUDP {
			s[i] += "/udp"
		}
	}
	return strings.Join(s, ", ")
}

func canonicalName(name string) string {
	return strings.TrimSuffix(strings.ToLower(name), ".")
}

// AddressClass names why addr is not a public destination ("a loopback
// address", "a cloud metadata address", ...), or returns "" for a public
// address. It covers everything profile.IsPrivateAddr refuses.
func AddressClass(addr netip.Addr) string {
	addr = addr.Unmap()
	if profile.IsMetadataAddr(addr) {
		return "a cloud metadata address"
	}
	switch {
	case !addr.IsValid():
		return "not an address"
	case addr.IsLoopback():
		return "a loopback address"
	case addr.IsUnspecified():
		return "the unspecified address"
	case addr.IsMulticast():
		return "a multicast address"
	case addr.IsLinkLocalUnicast():
		return "a link-local address"
	case addr.Is4() && addr.IsPrivate():
		return "a private (RFC 1918) address"
	case addr.Is6() && addr.IsPrivate():
		return "a unique local (ULA) address"
	case cgnat.Contains(addr):
		return "a CGNAT (100.64.0.0/10) address"
	case profile.IsPrivateAddr(addr):
		return "a reserved address"
	}
	return ""
}

var cgnat = netip.MustParsePrefix("100.64.0.0/10")
