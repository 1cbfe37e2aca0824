package linux

import (
	"bytes"
	"net/netip"
	"testing"
)

// The helper's parser must agree with net/netip on every form the
// supervisor sends and refuse what netip refuses.
func TestParseIP(t *testing.T) {
	for _, s := range []string{
		"10.0.2.100", "0.0.0.0", "255.255.255.255",
		"fd41:6972:6c6b::100", "fd41:6972:6c6b::2", "::", "::1", "1::",
		"1:2:3:4:5:6:7:8", "fe80::1:2", "1:2:3:4:5:6::8",
	} {
		want := netip.MustParseAddr(s).AsSlice()
		got, err := parseIP(s)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("parseIP(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{
		"", "10.0.2", "10.0.2.256", "10.0.2.01", "10.0.2.-1", "1.2.3.4.5",
		"1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9", "1::2::3", "1:2:3:4:5:6:7::8",
		"12345::", "g::", ":1:2:3:4:5:6:7", "1:2:3:4:5:6:7:",
	} {
		if _, err := netip.ParseAddr(s); err == nil {
			t.Fatalf("netip accepts %q: the table is wrong", s)
		}
		if got, err := parseIP(s); err == nil {
			t.Errorf("parseIP(%q) = %v, want an error", s, got)
		}
	}
}

func TestParsePrefix(t *testing.T) {
	for _, tc := range []struct {
		in   string
		bits int
		ok   bool
	}{
		{"10.0.2.100/32", 32, true},
		{"fd41:6972:6c6b::100/128", 128, true},
		{"10.0.0.0/8", 8, true},
		{"10.0.2.100/33", 0, false},
		{"10.0.2.100/", 0, false},
		{"10.0.2.100/08", 0, false},
		{"10.0.2.100", 0, false},
		{"::/129", 0, false},
	} {
		p, err := parsePrefix(tc.in)
		if (err == nil) != tc.ok || (tc.ok && p.bits != tc.bits) {
			t.Errorf("parsePrefix(%q) = %+v, %v; want ok=%v bits %d", tc.in, p, err, tc.ok, tc.bits)
		}
	}
}

func TestParseMAC(t *testing.T) {
	got, err := parseMAC("02:41:69:72:00:64")
	if err != nil || !bytes.Equal(got, []byte{2, 0x41, 0x69, 0x72, 0, 0x64}) {
		t.Errorf("parseMAC = %x, %v", got, err)
	}
	for _, s := range []string{"", "02:41:69:72:00", "02:41:69:72:00:64:01", "2:41:69:72:00:64", "02:41:69:72:00:zz", "02-41-69-72-00-64"} {
		if _, err := parseMAC(s); err == nil {
			t.Errorf("parseMAC(%q): want an error", s)
		}
	}
}
