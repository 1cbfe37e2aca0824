package gate

import (
	"github.com/airlockhq/airlock/profile"
)

// staticAccess is a table-backed ProfileAccess for tests: the access of a
// kind, or of one exact kind and target, with a default for the rest.
type staticAccess struct {
	byKind   map[string]profile.Access
	byTarget map[[2]string]profile.Access
	fallback profile.Access
}

func (s staticAccess) Access(kind, target string) profile.Access {
	if a, ok := s.byTarget[[2]string{kind, target}]; ok {
		return a
	}
	if a, ok := s.byKind[kind]; ok {
		return a
	}
	return s.fallback
}

func (s staticAccess) Fingerprint() string { return "static-test-profile" }
