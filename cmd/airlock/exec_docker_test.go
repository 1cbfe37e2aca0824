package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// dockerImage builds the test images with the provider's script (no
// registry) and returns the id of name; without a Docker Engine the
// test is skipped, unless AIRLOCK_REQUIRE_DOCKER=1 makes it fail.
func dockerImage(t *testing.T, name string) string {
	t.Helper()
	if out, err := exec.Command("docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		msg := "no Docker Engine answers: " + strings.TrimSpace(string(out))
		if os.Getenv("AIRLOCK_REQUIRE_DOCKER") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	out, err := exec.Command("../../provider/docker/testdata/build-images.sh").Output()
	if err != nil {
		t.Fatalf("build-images.sh: %v", err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if n, id, ok := strings.Cut(l, " "); ok && n == name {
			return id
		}
	}
	t.Fatalf("build-images.sh made no %s image", name)
	return ""
}

// TestExecKilledCallerLeavesNoWork SIGKILLs 'airlock exec' while its
// command runs in a container, and watches the Engine: the container
// stops by itself within the run's deadline and the container's grace
// (5s), with slack. Both ways a run can go: its command as the
// container's own process (no files), and as an exec beside the keeper
// (with an input file).
func TestExecKilledCallerLeavesNoWork(t *testing.T) {
	img := dockerImage(t, "busybox")
	bin := buildAirlock(t)
	const deadline = 8 * time.Second
	for _, tc := range []struct {
		name  string
		extra []string
	}{
		{"direct", nil},
		{"keeper", []string{"--input", "in=" + bin}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			name := fmt.Sprintf("killed-%s-%d", tc.name, os.Getpid())
			cat := filepath.Join(dir, "sandboxes.toml")
			if err := os.WriteFile(cat, []byte(fmt.Sprintf("[sandbox.%s]\nprovider = \"docker\"\nimage = %q\ntimeout = \"%s\"\nscratch = \"256MiB\"\n",
				name, img, deadline)), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"exec", "--config", cat, "--sandbox", name, "--lang", "sh",
				"--code", "echo work > beat; while :; do sleep 1; done"}, tc.extra...)
			cmd := exec.Command(bin, args...)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var id string
			t.Cleanup(func() {
				if cmd.ProcessState == nil {
					cmd.Process.Kill()
					cmd.Wait()
				}
				if id != "" {
					exec.Command("docker", "rm", "-f", id).Run()
				}
			})
			running := func() bool {
				out, _ := exec.Command("docker", "inspect", "-f", "{{.State.Running}}", id).Output()
				return strings.TrimSpace(string(out)) == "true"
			}
			// The run's container, once its command runs (the file it
			// writes is there).
			for i := 0; ; i++ {
				if i > 200 {
					t.Fatal("the run's container never ran its command")
				}
				out, _ := exec.Command("docker", "ps", "-q", "--no-trunc", "--filter", "label=io.airlock.sandbox="+name).Output()
				if id = strings.TrimSpace(string(out)); id != "" &&
					exec.Command("docker", "exec", "-u", "65534", id, "test", "-e", "/tmp/beat").Run() == nil {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			// The container was running its command just before (the
			// loop above); from here only the container can stop it.
			killed := time.Now()
			limit := deadline + 5*time.Second + 20*time.Second
			for running() {
				if time.Since(killed) > limit {
					t.Fatalf("the container of a killed airlock still runs %s after the kill (deadline %s)", limit, deadline)
				}
				time.Sleep(200 * time.Millisecond)
			}
			t.Logf("stopped %s after the SIGKILL", time.Since(killed).Round(100*time.Millisecond))
		})
	}
}
