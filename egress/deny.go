package egress

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// A network deny list (profile.NetworkSpec.Deny) is checked before the
// allowlist, in both modes: an entry refuses its destination even when an
// allowlist entry names it or mode "all" allows every public address.
// Names are matched as the allowlist matches them: against the names this
// run's DNS answers gave the address, so a name is refused for an
// address the sandbox learnt through the gateway. A name denied on every
// port is not answered at all.

// ParseDeny compiles one deny entry: HOST or HOST:PORT, where HOST is a
// DNS name, a *.suffix wildcard or an IP literal. Without a port the
// entry covers every port. It covers TCP and UDP (Protocol is empty).
func ParseDeny(entry string) (Rule, error) {
	if strings.Contains(entry, "/") {
		return Rule{}, fmt.Errorf("%w: deny %q: write host[:port]; a deny entry covers TCP and UDP", ErrPolicy, entry)
	}
	r, err := ParseRule(entry)
	if err != nil {
		return Rule{}, fmt.Errorf("deny: %w", err)
	}
	r.Protocol = ""
	if !explicitPort(entry) {
		r.Ports = nil
	}
	return r, nil
}

// explicitPort reports whether a host[:port] entry names its port.
func explicitPort(entry string) bool {
	if _, err := netip.ParseAddrPort(entry); err == nil {
		return true
	}
	if _, err := netip.ParseAddr(strings.Trim(entry, "[]")); err == nil {
		return false
	}
	return strings.Contains(entry, ":")
}

// coversPort reports whether a deny rule covers port.
func (r Rule) coversPort(port uint16) bool { return r.Ports == nil || slices.Contains(r.Ports, port) }

// denied returns the deny entry that refuses addr:port reached under
// names, or "".
func (p *Policy) denied(addr netip.Addr, port uint16, names []string) string {
	for _, r := range p.deny {
		if !r.coversPort(port) {
			continue
		}
		if r.Addr.IsValid() && r.Addr == addr {
			return r.Entry
		}
		for _, n := range names {
			if r.matchesName(n) {
				return r.Entry
			}
		}
	}
	return ""
}

// deniesName reports whether a deny entry refuses name on every port, so
// that the DNS server need not answer it.
func (p *Policy) deniesName(name string) bool {
	for _, r := range p.deny {
		if r.Ports == nil && r.matchesName(name) {
			return true
		}
	}
	return false
}

// Denied returns the compiled deny entries.
func (p *Policy) Denied() []Rule { return slices.Clone(p.deny) }
