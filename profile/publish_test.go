package profile

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestPublishAddresses: network.publish_addresses takes IP literals in
// any spelling and keeps one canonical, sorted list; anything else is a
// FieldError naming the field and the fix. CanPublishOn allows loopback
// always and another address only when it is listed.
func TestPublishAddresses(t *testing.T) {
	ws := t.TempDir()
	for _, c := range []struct {
		name string
		in   []string
		want []string // nil with err
		err  bool
	}{
		{"none", nil, nil, false},
		{"wildcards", []string{"::", "0.0.0.0"}, []string{"0.0.0.0", "::"}, false},
		{"canonical and unique", []string{"2001:DB8:0::1", "2001:db8::1", "::ffff:192.168.1.5"}, []string{"192.168.1.5", "2001:db8::1"}, false},
		{"a name", []string{"example.com"}, nil, true},
		{"with a port", []string{"0.0.0.0:8080"}, nil, true},
		{"a CIDR", []string{"192.168.0.0/16"}, nil, true},
		{"with a zone", []string{"fe80::1%eth0"}, nil, true},
		{"empty", []string{""}, nil, true},
		{"bracketed", []string{"[::1]"}, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := Preset("workspace")
			s.Workspace = ws
			s.Network.PublishAddresses = slices.Clone(c.in)
			p, err := New(s)
			if c.err {
				var fe *FieldError
				if !errors.As(err, &fe) || fe.Field != "network.publish_addresses" || !strings.Contains(err.Error(), "0.0.0.0") {
					t.Fatalf("New with publish_addresses %q: %v; want a FieldError for network.publish_addresses naming the fix", c.in, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Spec().Network.PublishAddresses; !slices.Equal(got, c.want) {
				t.Errorf("publish_addresses = %q; want %q", got, c.want)
			}
		})
	}

	s := Preset("workspace")
	s.Workspace = ws
	plain, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	s.Network.PublishAddresses = []string{"0.0.0.0", "192.168.7.1"}
	wide, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		addr        string
		plain, wide bool
	}{
		{"127.0.0.1", true, true},
		{"127.0.0.2", true, true},
		{"::1", true, true},
		{"0.0.0.0", false, true},
		{"192.168.7.1", false, true},
		{"::ffff:192.168.7.1", false, true},
		{"192.168.7.2", false, false}, // 0.0.0.0 is an address, not a pattern
		{"::", false, false},
		{"localhost", false, false},
		{"", false, false},
	} {
		if got := plain.CanPublishOn(c.addr); got != c.plain {
			t.Errorf("without publish_addresses, CanPublishOn(%q) = %v", c.addr, got)
		}
		if got := wide.CanPublishOn(c.addr); got != c.wide {
			t.Errorf("with publish_addresses %q, CanPublishOn(%q) = %v", s.Network.PublishAddresses, c.addr, got)
		}
	}
	if plain.Fingerprint() == wide.Fingerprint() {
		t.Error("publish_addresses does not change the fingerprint")
	}
}

// TestPublishAddressesTOML: the key reads from a profile file, unknown
// spellings of it are errors, and a layer adds to the list below it.
func TestPublishAddressesTOML(t *testing.T) {
	s, err := ParseTOML("p.toml", []byte("[network]\nmode = \"none\"\npublish_addresses = [\"0.0.0.0\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Network.PublishAddresses, []string{"0.0.0.0"}) {
		t.Errorf("publish_addresses from TOML = %q", s.Network.PublishAddresses)
	}
	// The spec's JSON (the fingerprint's encoding, and what the Report
	// shows) carries it back to the same profile.
	s.Workspace = t.TempDir()
	p, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := json.Marshal(p.Spec())
	if err != nil {
		t.Fatal(err)
	}
	var back Spec
	if err := json.Unmarshal(enc, &back); err != nil {
		t.Fatal(err)
	}
	if q, err := New(back); err != nil || q.Fingerprint() != p.Fingerprint() || !q.CanPublishOn("0.0.0.0") {
		t.Errorf("the JSON round trip lost publish_addresses (err %v): %s", err, enc)
	}
	if _, err := ParseTOML("p.toml", []byte("[network]\npublish_address = \"0.0.0.0\"\n")); err == nil || !strings.Contains(err.Error(), "unknown key") {
		t.Errorf("a misspelt key is not an error: %v", err)
	}
	m := Merge(s, Spec{Network: NetworkSpec{PublishAddresses: []string{"192.168.7.1"}}})
	if !slices.Equal(m.Network.PublishAddresses, []string{"0.0.0.0", "192.168.7.1"}) {
		t.Errorf("merged publish_addresses = %q", m.Network.PublishAddresses)
	}
	m = Merge(s, Spec{Network: NetworkSpec{Mode: NetworkModeAllow, Allow: []string{"example.com"}}})
	if !slices.Equal(m.Network.PublishAddresses, []string{"0.0.0.0"}) {
		t.Errorf("a layer changing the mode dropped publish_addresses: %q", m.Network.PublishAddresses)
	}
}
