package main

import (
	"os/exec"
	"strings"
	"testing"
)

// allowedAirlock are the only packages of this module the helper binary
// may link: it exists to start small, and each package more is paid at
// each of its starts, two per run.
var allowedAirlock = map[string]bool{
	"github.com/airlockhq/airlock/cmd/airlock-sandbox":             true,
	"github.com/airlockhq/airlock/sandbox/helper":                  true,
	"github.com/airlockhq/airlock/sandbox/internal/linux":          true,
	"github.com/airlockhq/airlock/sandbox/internal/linux/landlock": true,
	"github.com/airlockhq/airlock/sandbox/internal/linux/seccomp":  true,
	"github.com/airlockhq/airlock/internal/pathglob":               true,
}

// heavyStd are standard packages whose inits or size the helpers do not
// need (the supervisor's net, os/exec, the resolver, regexps).
var heavyStd = []string{"net", "net/http", "os/exec", "regexp", "crypto/tls", "path/filepath", "text/template"}

// TestLeanImports: the helper binary links only stage 2, the guard proxy
// and what they use. A new import that pulls in the sandbox's supervisor
// side, the profile or the CLI fails here, naming the package.
func TestLeanImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Skipf("go list: %v: %s", err, out)
	}
	deps := strings.Fields(string(out))
	if !strings.Contains(string(out), "github.com/airlockhq/airlock/sandbox/internal/linux\n") {
		t.Fatalf("go list -deps lists no sandbox/internal/linux: the check reads the wrong output:\n%s", out)
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "github.com/airlockhq/airlock/") && !allowedAirlock[d] {
			t.Errorf("airlock-sandbox links %s: only the helpers belong here ('go list -deps -f {{.ImportPath}}:{{.Imports}}' shows through what)", d)
		}
		for _, h := range heavyStd {
			if d == h {
				t.Errorf("airlock-sandbox links %s, which the helpers do not need", d)
			}
		}
	}
	// The control: the same check finds them in airlock.
	out, err = exec.Command("go", "list", "-deps", "../airlock").CombinedOutput()
	if err != nil {
		t.Fatalf("go list ../airlock: %v: %s", err, out)
	}
	for _, h := range []string{"github.com/airlockhq/airlock/sandbox", "github.com/airlockhq/airlock/profile", "net", "os/exec"} {
		if !strings.Contains(string(out), "\n"+h+"\n") {
			t.Errorf("airlock does not link %s: the lists above name what no binary links", h)
		}
	}
}
