package shell

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/tool"
)

// TestContainersForReal runs docker for real (the test images of
// provider/docker, built without a registry) and checks that what the
// analysis says is what happens: the command after the image runs in the
// container, and a bind mount makes the host directory writable from it.
func TestContainersForReal(t *testing.T) {
	if out, err := exec.Command("docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		t.Skipf("no Docker Engine answers: %s", strings.TrimSpace(string(out)))
	}
	out, err := exec.Command(filepath.Join("..", "provider", "docker", "testdata", "build-images.sh")).Output()
	if err != nil {
		t.Skipf("the test images cannot be built here: %v", err)
	}
	img := ""
	for _, l := range strings.Split(string(out), "\n") {
		if id, ok := strings.CutPrefix(l, "busybox "); ok {
			img = id
		}
	}
	if img == "" {
		t.Fatalf("no busybox image in %q", out)
	}
	host := t.TempDir()
	if err := os.Chmod(host, 0o777); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		cmd      string
		evidence string // a file the run leaves in host
		want     tool.Requirement
	}{
		{"docker run --rm -v " + host + ":/h " + img + " touch /h/made", "made",
			tool.Requirement{Kind: tool.KindFilesystemWrite, Target: host, Tree: true}},
		{"docker run --rm --mount type=bind,source=" + host + ",target=/h " + img + " sh -c 'echo x > /h/inner'", "inner",
			tool.Requirement{Kind: tool.KindCommandExecute, Target: "echo x"}},
		{"docker run --rm -v " + host + ":/h:ro " + img + " cat /h/made", "",
			tool.Requirement{Kind: tool.KindFilesystemRead, Target: host, Tree: true}},
	}
	for _, tt := range tests {
		c := exec.Command("bash", "-c", tt.cmd)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", tt.cmd, err, out)
		}
		if tt.evidence != "" {
			if _, err := os.Stat(filepath.Join(host, tt.evidence)); err != nil {
				t.Fatalf("%s left no %s on the host: %v", tt.cmd, tt.evidence, err)
			}
		}
		reqs := Requirements(tt.cmd, "/ws", "/home/u")
		if !slices.ContainsFunc(reqs, func(r tool.Requirement) bool {
			return r.Kind == tt.want.Kind && r.Target == tool.Canonical(tt.want.Target) && r.Tree == tt.want.Tree ||
				r.Kind == tt.want.Kind && r.Target == tt.want.Target
		}) {
			t.Errorf("%s: no %s %s among\n%s", tt.cmd, tt.want.Kind, tt.want.Target, show(reqs))
		}
		for _, r := range reqs {
			if r.Kind == tool.KindFilesystemWrite && strings.HasPrefix(r.Target, "/h") {
				t.Errorf("%s: a path in the container taken as this machine's: %v", tt.cmd, r)
			}
		}
	}
}
