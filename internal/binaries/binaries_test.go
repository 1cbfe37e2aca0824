package binaries_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/binaries"
)

// TestLeanImports holds each binary's link set to the table: nothing of
// its Excludes (a new import of the run or hook path that pulls the
// Docker client back into airlock fails here, with the package that
// brought it), everything of its Includes.
func TestLeanImports(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("no go command to list the binaries' packages with: %v", err)
	}
	for _, b := range binaries.All() {
		out, err := exec.Command("go", "list", "-deps", filepath.Join("..", "..", b.Main)).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v: %s", b.Main, err, out)
		}
		deps := strings.Fields(string(out))
		for _, d := range deps {
			if b.Excluded(d) {
				t.Errorf("%s imports %s: it belongs in another binary (internal/binaries); 'go mod why -m' or 'go list -deps -f {{.ImportPath}}:{{.Imports}} ./%s' shows through what", b.Name, d, b.Main)
			}
		}
		if len(b.Includes) == 0 {
			t.Errorf("%s lists no Includes: the check could read an empty list and pass", b.Name)
		}
		for _, want := range b.Includes {
			found := false
			for _, d := range deps {
				found = found || d == want
			}
			if !found {
				t.Errorf("%s does not import %s: the table names what is no longer there", b.Name, want)
			}
		}
	}
}

// TestTable: every command is held by one binary, each binary's main
// package is where the table says, and Excluded matches what the old
// heavy list matched.
func TestTable(t *testing.T) {
	seen := map[string]string{}
	for _, b := range binaries.All() {
		if got, ok := binaries.Of(b.Name); !ok || got.Main != b.Main {
			t.Errorf("Of(%q) = %+v, %v", b.Name, got, ok)
		}
		if m, err := filepath.Glob(filepath.Join("..", "..", b.Main, "main.go")); err != nil || len(m) != 1 {
			t.Errorf("%s: no main.go in %s", b.Name, b.Main)
		}
		for _, c := range b.Commands {
			if other, dup := seen[c]; dup {
				t.Errorf("%q is in both %s and %s", c, other, b.Name)
			}
			seen[c] = b.Name
			if h, ok := binaries.Holder(c); !ok || h.Name != b.Name {
				t.Errorf("Holder(%q) = %s, %v; want %s", c, h.Name, ok, b.Name)
			}
		}
	}
	if _, ok := binaries.Holder("nonesuch"); ok {
		t.Error("Holder found a command no binary has")
	}
	airlock, _ := binaries.Of(binaries.Airlock)
	for pkg, want := range map[string]bool{
		"modernc.org/sqlite":                           true,
		"net/http":                                     true,
		"net/http/httptrace":                           true,
		"net/httpx":                                    false,
		"github.com/airlockhq/airlock/server":          true,
		"github.com/airlockhq/airlock/server/store":    true,
		"github.com/airlockhq/airlock/serverless":      false,
		"github.com/google/jsonschema-go/jsonschema":   true,
		"github.com/airlockhq/airlock/sandbox":         false,
		"gvisor.dev/gvisor/pkg/tcpip/stack":            true,
		"github.com/airlockhq/airlock/egress/netstack": true,
		"github.com/airlockhq/airlock/egress":          false,
		"github.com/airlockhq/airlock/egress/remote":   false,
		"github.com/airlockhq/airlock/integrations/mc": false,
	} {
		if got := airlock.Excluded(pkg); got != want {
			t.Errorf("airlock.Excluded(%q) = %v, want %v", pkg, got, want)
		}
	}
}
