package profile

import (
	"regexp"
	"testing"
)

// envVarName accepts exactly what the patterns it replaced accepted.
func TestEnvVarName(t *testing.T) {
	pattern := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*\*?$`)
	name := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	for _, s := range []string{
		"", "*", "**", "A", "a", "_", "PATH", "LC_*", "LC_**", "LC*_", "9A", "A9", "_9",
		"A-B", "A B", "A=B", "A\\n", "A\n", "Ä", "AÄ", "A*B", "*A", "A.B", "aZ_09*",
	} {
		if got, want := envVarName(s, true), pattern.MatchString(s); got != want {
			t.Errorf("envVarName(%q, star) = %v, the pattern says %v", s, got, want)
		}
		if got, want := envVarName(s, false), name.MatchString(s); got != want {
			t.Errorf("envVarName(%q) = %v, the pattern says %v", s, got, want)
		}
	}
}
