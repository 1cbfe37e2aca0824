package guard

import "testing"

func TestKernelAtLeast(t *testing.T) {
	for _, tc := range []struct {
		release      string
		major, minor int
		want         bool
	}{
		{"6.18.44-fc-v1045", 5, 19, true},
		{"5.19.0", 5, 19, true},
		{"5.18.17-generic", 5, 19, false},
		{"4.19.0", 5, 14, false},
		{"10.0", 5, 14, true},
		{"", 5, 14, false},
		{"linux", 5, 14, false},
	} {
		if got := KernelAtLeast(tc.release, tc.major, tc.minor); got != tc.want {
			t.Errorf("KernelAtLeast(%q, %d, %d) = %v, want %v", tc.release, tc.major, tc.minor, got, tc.want)
		}
	}
}

// TestProbeAllOrder: each probe sees the ones before it. Without seccomp
// the connect notifier cannot run, and the create guard, which needs it,
// gives its reason; an old kernel refuses the create guard alone.
func TestProbeAllOrder(t *testing.T) {
	found := ProbeAll(Host{Kernel: "6.1.0", Seccomp: Availability{Reason: "off"}})
	if len(found) != len(Registry) {
		t.Fatalf("ProbeAll returned %d results for %d guards", len(found), len(Registry))
	}
	if u, c := found[UnixSocket], found[Create]; u.OK || c.OK || c.Reason != u.Reason {
		t.Errorf("without seccomp: unix %+v, create %+v; want both off, for the same reason", u, c)
	}
	h := Host{Kernel: "5.10.0", found: map[Name]Availability{UnixSocket: {OK: true}}}
	if c := (createProbe{}).Probe(&h); c.OK || c.Reason == "" {
		t.Errorf("Linux 5.10: create guard %+v, want off with a reason", c)
	}
}
