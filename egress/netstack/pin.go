package netstack

import (
	"context"
	"net/netip"
)

// pinDenied ties the addresses of the names a deny entry names exactly
// to those names before the sandbox runs, in mode "all": there the
// sandbox may reach any public address, so one it learnt elsewhere than
// the gateway's DNS (a literal in a script, another resolver) would not
// be tied to the denied name otherwise. Each name is looked up once, both
// families, with the lookup timeout; a failed lookup leaves the name to
// the DNS server. The addresses are the resolver's answers now, not every
// address the name may have later or elsewhere.
func (g *Gateway) pinDenied() {
	if !g.policy.Public() {
		return
	}
	for _, r := range g.policy.Denied() {
		if r.Name == "" || r.Wildcard {
			continue
		}
		ctx, cancel := context.WithTimeout(g.ctx, g.lookupTO)
		found, err := g.resolver.LookupNetIP(ctx, "ip", r.Name+".")
		cancel()
		if err != nil {
			continue
		}
		addrs := make([]netip.Addr, len(found))
		for i, a := range found {
			addrs[i] = a.Unmap()
		}
		g.remember(r.Name, addrs)
	}
}
