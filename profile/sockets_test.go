package profile

import (
	"errors"
	"testing"
)

// filesystem.sockets: absolute (or ~/, $WORKSPACE/) paths, never the
// kernel's own trees, and part of the fingerprint.
func TestSockets(t *testing.T) {
	ws := t.TempDir()
	base := Preset("workspace")
	base.Workspace = ws
	for _, bad := range []string{"agent.sock", "/dev/log", "/proc/1/fd/3", "/"} {
		s := base
		s.Filesystem.Sockets = []string{bad}
		if _, err := New(s); !errors.Is(err, ErrInvalid) {
			t.Errorf("sockets = [%q]: error %v, want a filesystem.sockets field error", bad, err)
		}
	}
	s := base
	s.Filesystem.Sockets = []string{"$WORKSPACE/run/../agent.sock", ws + "/agent.sock"}
	p, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Spec().Filesystem.Sockets; len(got) != 1 || got[0] != ws+"/agent.sock" {
		t.Errorf("sockets = %q, want the one cleaned absolute path", got)
	}
	plain, err := New(base)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Fingerprint() == p.Fingerprint() {
		t.Error("naming a socket does not change the fingerprint")
	}
}
