// Package airlockbin builds airlock's binaries from this source tree for
// the tests and benchmarks that run the CLI as a user would: airlock
// (cmd/airlock), airlock-server (cmd/airlock-server) and airlock-gateway
// (cmd/airlock-gateway), side by side in one directory, because airlock
// hands mcp, exec and serve to the airlock-server beside it and serves a
// run's network from the airlock-gateway beside it.
//
// What it does not do: run them, or decide where a test keeps its state.
package airlockbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Packages are the import paths of the binaries Build makes, in the
// order of their names there.
var Packages = []string{
	"github.com/airlockhq/airlock/cmd/airlock",
	"github.com/airlockhq/airlock/cmd/airlock-server",
	"github.com/airlockhq/airlock/cmd/airlock-gateway",
}

// names are the binaries' file names, in the order of Packages.
var names = []string{"airlock", "airlock-server", "airlock-gateway"}

// Build compiles the binaries into dir with one go build (the README's
// way: "go build -o DIR/ ./cmd/...") and returns airlock's path.
// extraArgs go to go build before the packages (-trimpath, -ldflags=...).
func Build(dir string, extraArgs ...string) (string, error) {
	args := append([]string{"build", "-o", dir + string(filepath.Separator)}, extraArgs...)
	cmd := exec.Command("go", append(args, Packages...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building airlock, airlock-server and airlock-gateway: %v\n%s", err, out)
	}
	bin := filepath.Join(dir, "airlock")
	for _, name := range names {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("go build left no %s in %s: %w", name, dir, err)
		}
	}
	return bin, nil
}

// BuildT is Build into a directory of the test's own, failing the test
// when the build fails.
func BuildT(t testing.TB) string {
	t.Helper()
	bin, err := Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Server is the path of the airlock-server beside the airlock at bin,
// where airlock looks for it.
func Server(bin string) string {
	return filepath.Join(filepath.Dir(bin), "airlock-server")
}

// CopyTo copies the airlock at bin and the binaries beside it into dir (mode 0755, for a test that runs them as another user from a
// directory that user may read) and returns the copy of airlock.
func CopyTo(bin, dir string) (string, error) {
	for _, name := range names {
		src := filepath.Join(filepath.Dir(bin), name)
		data, err := os.ReadFile(src)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(src)), data, 0o755); err != nil {
			return "", err
		}
	}
	return filepath.Join(dir, filepath.Base(bin)), nil
}
