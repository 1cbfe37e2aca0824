package pathglob

import "testing"

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, path   string
		match, orParent bool
	}{
		{"/ws/**/.env", "/ws/.env", true, true},
		{"/ws/**/.env", "/ws/a/b/.env", true, true},
		{"/ws/**/.env", "/ws/a/b/.env/x", false, true},
		{"/ws/ci/*.yml", "/ws/ci/a.yml", true, true},
		{"/ws/ci/*.yml", "/ws/ci/sub/a.yml", false, false},
		{"/ws/ci/**", "/ws/ci", true, true},
		{`/ws/x\[1]`, "/ws/x[1]", true, true},
		{"/ws/a", "/ws", false, false},
		{"/ws/[", "/ws/[", false, false}, // malformed: no match
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.path); got != tt.match {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.path, got, tt.match)
		}
		if got := MatchOrParent(tt.pattern, tt.path); got != tt.orParent {
			t.Errorf("MatchOrParent(%q, %q) = %v, want %v", tt.pattern, tt.path, got, tt.orParent)
		}
	}
}
