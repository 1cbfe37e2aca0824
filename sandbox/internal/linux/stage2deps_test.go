package linux

import (
	"os/exec"
	"strings"
	"testing"
)

// The stage-2 init hook runs once every package this one imports is
// initialised, and Go initialises the ready packages in import-path
// order: a dependency that sorts late ("net", "path/filepath", "regexp")
// makes the helper initialise first every package of the binary that
// sorts before it and is ready, about fifty in airlock (the Docker
// client's regexps, x/text, SQLite's libc), at each of the two helper
// starts of a run. This keeps such imports out of the helper.
func TestStage2ImportsInitialiseEarly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Skipf("go list: %v: %s", err, out)
	}
	deps := map[string]bool{}
	for _, d := range strings.Fields(string(out)) {
		deps[d] = true
	}
	if !deps["golang.org/x/sys/unix"] {
		t.Fatalf("go list -deps lists no golang.org/x/sys/unix: the check reads the wrong output:\n%s", out)
	}
	for _, late := range []string{"net", "net/netip", "path/filepath", "regexp", "log", "mime", "crypto/tls"} {
		if deps[late] {
			t.Errorf("the stage-2 helper imports %s (see netaddr.go for why it must not); `go mod why` or `go list -deps` shows through what", late)
		}
	}
}
