package visible

import (
	"strings"
	"testing"
)

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/ws/secret.env", "/ws/secret.env"},
		{"café/ünïcode 名前", "café/ünïcode 名前"},
		{"a b", "a b"},
		{"", ""},
		{"x\nairlock: all clear", `"x\nairlock: all clear"`},
		{"x\rforged", `"x\rforged"`},
		{"x\x1b[2Jcleared", `"x\x1b[2Jcleared"`},
		{"tab\there", `"tab\there"`},
		{"c1\u0085next", `"c1\u0085next"`},
		{"csi\u009b2J", `"csi\u009b2J"`},
		{"del\x7f", `"del\x7f"`},
		{"bidi\u202etxt.exe", `"bidi\u202etxt.exe"`},
		{"line\u2028sep", `"line\u2028sep"`},
		{"nbsp\u00a0x", `"nbsp\u00a0x"`},
		{"bad\xffutf8", `"bad\xffutf8"`},
		{"quote\" and \\ with \n", `"quote\" and \\ with \n"`},
	} {
		got := Text(tc.in)
		if got != tc.want {
			t.Errorf("Text(%q) = %s, want %s", tc.in, got, tc.want)
		}
		for _, b := range []byte(got) {
			if b < 0x20 || b == 0x7f {
				t.Errorf("Text(%q) = %q still holds control byte %#x", tc.in, got, b)
			}
		}
		if _, escaped := Escape(tc.in); escaped != (got != tc.in) {
			t.Errorf("Escape(%q) says escaped=%v, but Text changed it: %v", tc.in, escaped, got != tc.in)
		}
		if strings.ContainsAny(got, "\n\r") {
			t.Errorf("Text(%q) = %q is more than one line", tc.in, got)
		}
	}
}
