package sandbox

import (
	"testing"

	"github.com/airlockhq/airlock/profile"
)

// A network deny list under network all needs the egress gateway: on a
// host without a TUN device (which this test stands for by clearing the
// probe's Tun; it cannot take the machine's device away) the line is
// unavailable, so New refuses the profile instead of sharing the host's
// network with the entries ignored.
func TestNetworkDenyStatus(t *testing.T) {
	h := ProbeHost()
	if !h.UserNamespaces {
		t.Skip("no user namespaces: " + h.UserNSReason)
	}
	spec := profile.Preset("workspace")
	spec.Workspace = t.TempDir()
	spec.Network = profile.NetworkSpec{Mode: profile.NetworkModeAll, Deny: []string{"203.0.113.9:443"}}
	p, err := profile.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	noTun := h
	noTun.Tun, noTun.TunReason = false, "no /dev/net/tun (test)"
	if st := reportFor(p, noTun).Status(profile.NetworkFiltered); st.Status != Unavailable {
		t.Errorf("without TUN, network all with deny entries: %+v, want unavailable", st)
	}
	withTun := h
	withTun.Tun = true
	if st := reportFor(p, withTun).Status(profile.NetworkFiltered); st.Status != Enforced {
		t.Errorf("with TUN, network all with deny entries: %+v, want enforced", st)
	}
	spec.Network.Deny = nil
	p, err = profile.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	if st := reportFor(p, noTun).Status(profile.NetworkFiltered); st.Status != NotApplied {
		t.Errorf("network all without deny entries: %+v, want not applied", st)
	}
}
