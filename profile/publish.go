package profile

import (
	"net/netip"
	"slices"
)

// CanPublishOn reports whether a published port may listen on the host
// address addr (an IP literal): loopback always, another address only
// when network.publish_addresses names it. An entry covers the address it
// names and nothing else; "0.0.0.0" is the IPv4 wildcard, not a pattern,
// so it allows a listener on 0.0.0.0 but not one on 192.168.1.5.
func (p *Profile) CanPublishOn(addr string) bool {
	ip, err := netip.ParseAddr(addr)
	if err != nil || ip.Zone() != "" {
		return false
	}
	ip = ip.Unmap()
	if ip.IsLoopback() {
		return true
	}
	return slices.Contains(p.spec.Network.PublishAddresses, ip.String())
}
