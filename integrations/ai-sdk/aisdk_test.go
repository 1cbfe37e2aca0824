package aisdk

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/airlockbin"
)

// TestNode runs the package's Node tests (node --test) with AIRLOCK_BIN set
// to an airlock built from this tree, so they drive a real `airlock serve`
// from the same commit. Without `npm ci` here the test skips, except in CI
// (CI=true), where it fails: .ci/run installs the pinned packages.
func TestNode(t *testing.T) {
	for _, dep := range []string{"harness-100", "harness-122", "ai", "typescript"} {
		if _, err := os.Stat(filepath.Join("node_modules", dep, "package.json")); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("node_modules/%s is missing: run 'npm ci' in integrations/ai-sdk (.ci/run does)", dep)
			}
			t.Skipf("node_modules/%s is missing: run 'npm ci' in integrations/ai-sdk to test the adapter against the pinned @ai-sdk/harness", dep)
		}
	}
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node is not installed (.ci/run installs it)")
		}
		t.Skip("node is not installed")
	}
	bin := airlockbin.BuildT(t)
	tests, err := filepath.Glob(filepath.Join("test", "*.test.js"))
	if err != nil || len(tests) == 0 {
		t.Fatalf("no Node tests found in test/ (%v)", err)
	}
	cmd := exec.Command(node, append([]string{"--test", "--test-reporter=spec"}, tests...)...)
	cmd.Env = append(os.Environ(), "AIRLOCK_BIN="+bin, "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test failed: %v\n%s", err, out)
	}
	// A run where the real-daemon tests skipped is not a pass in CI.
	if os.Getenv("CI") == "true" && strings.Contains(string(out), "AIRLOCK_BIN is not set") {
		t.Fatalf("the real-daemon tests skipped:\n%s", out)
	}
	t.Logf("%s", out)
}
