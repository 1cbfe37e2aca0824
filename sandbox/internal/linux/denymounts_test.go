package linux

import "testing"

func TestUnescapeMountinfo(t *testing.T) {
	for in, want := range map[string]string{
		"/ws":                     "/ws",
		`/my\040project`:          "/my project",
		`/a\011b\012c\134d`:       "/a\tb\nc\\d",
		`/trailing\04`:            `/trailing\04`, // not an escape
		`/not\999an\escape`:       `/not\999an\escape`,
		`/two\040\040spaces`:      "/two  spaces",
		`/end\040`:                "/end ",
		`\040start`:               " start",
		`/utf8-\303\251t\303\251`: "/utf8-été",
	} {
		if got := unescapeMountinfo(in); got != want {
			t.Errorf("unescapeMountinfo(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBeneathAny(t *testing.T) {
	roots := []string{"/home/me/ws", "/etc"}
	for p, want := range map[string]bool{
		"/home/me/ws":            true,
		"/home/me/ws/.git/hooks": true,
		"/home/me/ws2":           false,
		"/home/me":               false,
		"/etc/ssl/private":       true,
		"/usr":                   false,
	} {
		if got := beneathAny(roots, p); got != want {
			t.Errorf("beneathAny(%q) = %v, want %v", p, got, want)
		}
	}
	if !beneathAny([]string{"/"}, "/anything") {
		t.Error(`beneathAny(["/"], "/anything") = false`)
	}
}
