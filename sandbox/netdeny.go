package sandbox

import (
	"strings"

	"github.com/airlockhq/airlock/profile"
)

// The network deny list (profile.NetworkSpec.Deny, compiled from a
// workspace's Net and WebFetch deny rules) is the egress gateway's to
// enforce. With network "all" and no TUN device the sandbox would share
// the host's network, where nothing could refuse a deny entry; such a
// profile's network-filtered line is unavailable, which makes the
// Executor refuse it rather than run with the entries silently ignored.

// networkDenyStatus is the network-filtered line for network "all":
// not applied without deny entries; with them, enforced by the gateway.
func networkDenyStatus(n profile.NetworkSpec, h HostInfo, gateway, ns bool, nsWhy string) (profile.Guarantee, Enforcement, string, string) {
	g := profile.NetworkFiltered
	switch {
	case len(n.Deny) == 0:
		return g, NotApplied, "", "profile allows all networking"
	case gateway:
		return g, Enforced, egressMechanism + "; every public address but the network.deny entries (" + strings.Join(n.Deny, ", ") + ")", ""
	case !ns:
		return g, Unavailable, "", nsWhy
	}
	return g, Unavailable, "", "network.deny entries under network all need the egress gateway, which needs a TAP device (without one the host network would be shared): " + h.TunReason
}

// denyMechanism is what the network-filtered line adds for deny entries.
func denyMechanism(n profile.NetworkSpec) string {
	if len(n.Deny) == 0 {
		return ""
	}
	return "; network.deny entries (" + strings.Join(n.Deny, ", ") + ") refused before the allowlist"
}
