package tool

import (
	"errors"
	"testing"
)

func TestNormalizeHost(t *testing.T) {
	tests := []struct{ in, want string }{
		{"evil.example", "evil.example"},
		{"EVIL.example", "evil.example"},
		{"evil.example.", "evil.example"},
		{"evil\u3002example", "evil.example"},                // ideographic full stop
		{"evil\uff0eexample", "evil.example"},                // full-width full stop
		{"\uff45\uff56\uff49\uff4c.example", "evil.example"}, // full-width letters
		{"evi\u00adl.example", "evil.example"},               // soft hyphen
		{"ev\u200bil.example", "evil.example"},               // zero-width space
		{"b\u00fccher.example", "xn--bcher-kva.example"},
		{"xn--bcher-kva.example", "xn--bcher-kva.example"},
		{"XN--BCHER-KVA.example", "xn--bcher-kva.example"},
		{"%65vil.example", "evil.example"},
		{"2130706433", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"017700000001", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"0x7f000001.", "127.0.0.1"},
		{"169.254.169.254", "169.254.169.254"},
		{"[::1]", "::1"},
		{"[0:0::1]", "::1"},
		{"[::ffff:7f00:1]", "::ffff:127.0.0.1"},
		{"under_score.example", "under_score.example"},
	}
	for _, tt := range tests {
		got, err := NormalizeHost(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("NormalizeHost(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestNormalizeHostRefuses(t *testing.T) {
	for _, in := range []string{
		"", ".", "a..b", "evil example", "evil.example/", "evil%2fexample", "ev<il", "a\x00b",
		"xn--a.example",  // not valid punycode
		"1.2.3.4.5",      // ends in a number: an IPv4 address or nothing
		"256.1.1.1",      // a part over 255
		"0x100000000",    // out of range
		"1.2.3.09",       // 09 is not octal
		"example.0x",     // ends in a number that is not one
		"[fe80::1%eth0]", // zones are not URL hosts
		"[1.2.3.4]",      // not IPv6
		"\u200d.example", // a joiner out of context
	} {
		if got, err := NormalizeHost(in); !errors.Is(err, ErrInvalidHost) {
			t.Errorf("NormalizeHost(%q) = %q, %v; want an error", in, got, err)
		}
	}
}

func TestURLTarget(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://EVIL.example./x", "evil.example:443"},
		{"http://user:pw@evil.example:8080/", "evil.example:8080"},
		{"https://good.example@evil.example/", "evil.example:443"},
		{"https://evil.example\\@good.example/", "evil.example:443"}, // "\" ends the authority
		{"https:evil.example", "evil.example:443"},
		{"https:////evil.example", "evil.example:443"},
		{"HTTPS://evil.example:0443/", "evil.example:443"},
		{"http://2130706433/", "127.0.0.1:80"},
		{"http://[::1]:8080/", "[::1]:8080"},
		{"https://ev\til.example/", "evil.example:443"}, // tabs are dropped
		{"  https://evil.example  ", "evil.example:443"},
		{"https://evil.example?x", "evil.example:443"},
		{"https://evil.example#x", "evil.example:443"},
	}
	for _, tt := range tests {
		got, err := URLTarget(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("URLTarget(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"ftp://evil.example/", "https://", "https://evil.example:99999/",
		"https://evil.example:8x/", "https://a b/", "https://evil.example%00/", "evil.example"} {
		if got, err := URLTarget(in); err == nil {
			t.Errorf("URLTarget(%q) = %q, want an error", in, got)
		}
	}
}
