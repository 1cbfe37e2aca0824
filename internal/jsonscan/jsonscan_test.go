package jsonscan

import "testing"

func TestTokens(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
		ok   bool
		rest int // where the scanner stops
	}{
		{`"abc",`, "abc", true, 5},
		{`"a\nb"}`, "a\nb", true, 6},
		{`"a\u00e9"`, "aé", true, 9},
		{`"unterminated`, "", false, 13},
		{`"bad \x"`, "", false, 9},
		{`abc`, "", false, 0},
	} {
		s := Scanner{Data: []byte(c.in)}
		got, ok := s.Str()
		if got != c.want || ok != c.ok || (ok && s.I != c.rest) {
			t.Errorf("Str(%q) = %q, %v at %d; want %q, %v at %d", c.in, got, ok, s.I, c.want, c.ok, c.rest)
		}
	}
	s := Scanner{Data: []byte(`  -1.5e3 ,`)}
	s.Space()
	if start, ok := s.Scalar(); !ok || string(s.Data[start:s.I]) != "-1.5e3" {
		t.Errorf("Scalar: %q, %v", s.Data[start:s.I], ok)
	}
	if end, ok := s.After('}'); end || !ok {
		t.Errorf("After a comma: end %v, ok %v; want false, true", end, ok)
	}
	if _, ok := (&Scanner{Data: []byte(`,`)}).Scalar(); ok {
		t.Error("Scalar at a delimiter: ok")
	}
	for in, want := range map[string][2]bool{" ]": {true, true}, "}": {false, false}, "": {false, false}} {
		s := Scanner{Data: []byte(in)}
		if end, ok := s.After(']'); end != want[0] || ok != want[1] {
			t.Errorf("After(']') on %q = %v, %v; want %v, %v", in, end, ok, want[0], want[1])
		}
	}
}
