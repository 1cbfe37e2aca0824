package docker_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/airlockhq/airlock/provider"
	"github.com/airlockhq/airlock/provider/docker"
	"github.com/airlockhq/airlock/provider/providertest"
)

var (
	imagesOnce sync.Once
	images     map[string]string
	imagesErr  string
)

// testImages builds (or finds) the test images with
// testdata/build-images.sh: no registry is ever used. Without a Docker
// Engine the test is skipped, unless AIRLOCK_REQUIRE_DOCKER=1 (CI) makes
// it fail.
func testImages(t testing.TB) map[string]string {
	t.Helper()
	if out, err := exec.Command("docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		msg := "no Docker Engine answers: " + strings.TrimSpace(string(out))
		if os.Getenv("AIRLOCK_REQUIRE_DOCKER") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	imagesOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		cmd := exec.Command(filepath.Join(filepath.Dir(file), "testdata", "build-images.sh"))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			imagesErr = fmt.Sprintf("build-images.sh: %v: %s", err, stderr.String())
			return
		}
		images = map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if name, id, ok := strings.Cut(l, " "); ok {
				images[name] = id
			}
		}
	})
	if imagesErr != "" {
		t.Fatal(imagesErr)
	}
	return images
}

// ours lists the containers this test process's providers created.
func ours(t *testing.T) []string {
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "label="+docker.LabelOwner+"="+docker.Owner()).Output()
	if err != nil {
		t.Fatalf("docker ps: %v", err)
	}
	return strings.Fields(string(out))
}

func benchImage(b *testing.B) string { return testImages(b)["busybox"] }

func dockerDriver() provider.Driver { return docker.Driver() }

func TestDockerConformance(t *testing.T) {
	img := testImages(t)["python"]
	providertest.Run(t, providertest.Target{
		Driver:    docker.Driver(),
		Extra:     fmt.Sprintf("image = %q", img),
		Leftovers: ours,
	})
}

func open(t *testing.T, text string) (*provider.Catalog, *provider.Handle) {
	t.Helper()
	c, err := provider.ParseCatalog("t.toml", []byte(text+"\n[agent.a]\nsandboxes = [\"box\"]\n"), docker.Driver())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	h, err := c.Begin(provider.Identity{Agent: "a", User: "u", Session: "s"}).Sandbox("box")
	if err != nil {
		t.Fatal(err)
	}
	return c, h
}

func TestDockerLockedDownByDefault(t *testing.T) {
	img := testImages(t)["python"]
	_, h := open(t, fmt.Sprintf("[sandbox.box]\nprovider = \"docker\"\nimage = %q\nscope = \"session\"", img))
	res, err := h.Execute(context.Background(), provider.Request{Lang: "sh", Code: `
id -u; id -g
touch /rootfs-write 2>/dev/null && echo rootfs-writable || echo rootfs-read-only
ls /sys/class/net | tr '\n' ' '; echo
grep CapEff /proc/self/status
grep NoNewPrivs /proc/self/status
df -k /tmp | tail -1`})
	if err != nil || res.Status != provider.StatusSucceeded {
		t.Fatalf("%v %+v", err, res)
	}
	lines := strings.Split(res.Stdout, "\n")
	want := []string{"65534", "65534", "rootfs-read-only", "lo "}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d: %q, want %q\n%s", i, lines[i], w, res.Stdout)
		}
	}
	if !strings.Contains(res.Stdout, "CapEff:\t0000000000000000") || !strings.Contains(res.Stdout, "NoNewPrivs:\t1") {
		t.Errorf("capabilities or no_new_privs:\n%s", res.Stdout)
	}
	if f := strings.Fields(lines[6]); len(f) < 2 || f[1] != "65536" {
		t.Errorf("/tmp is not the 64 MiB tmpfs: %q", lines[6])
	}
	// The Engine's own view of the container.
	id := res.Metadata["container"]
	out, err := exec.Command("docker", "inspect", "-f",
		"{{.HostConfig.Memory}} {{.HostConfig.MemorySwap}} {{.HostConfig.NanoCpus}} {{.HostConfig.PidsLimit}} {{.HostConfig.NetworkMode}} {{.HostConfig.ReadonlyRootfs}} {{.HostConfig.CapDrop}} {{.HostConfig.SecurityOpt}} {{len .Mounts}}", id).CombinedOutput()
	if err != nil {
		t.Fatalf("inspect: %v %s", err, out)
	}
	if got, w := strings.TrimSpace(string(out)), "536870912 536870912 1000000000 64 none true [ALL] [no-new-privileges] 0"; got != w {
		t.Errorf("container settings:\n got %s\nwant %s", got, w)
	}
}

func TestDockerSweepsDetachedProcesses(t *testing.T) {
	img := testImages(t)["python"]
	_, h := open(t, fmt.Sprintf("[sandbox.box]\nprovider = \"docker\"\nimage = %q\nscope = \"session\"", img))
	count := provider.Request{Lang: "sh", Code: `n=0; for d in /proc/[0-9]*; do n=$((n+1)); done; echo $n`}
	res, _ := h.Execute(context.Background(), count)
	base := strings.TrimSpace(res.Stdout)
	res, err := h.Execute(context.Background(), provider.Request{Lang: "sh",
		Code: `setsid sh -c 'sleep 600' >/dev/null 2>&1 & nohup sleep 600 >/dev/null 2>&1 & echo started`})
	if err != nil || res.Stdout != "started\n" {
		t.Fatalf("%v %+v", err, res)
	}
	if res.Metadata["swept"] != "true" {
		t.Errorf("the call that detached processes was not swept: %v", res.Metadata)
	}
	res, _ = h.Execute(context.Background(), count)
	if res.Metadata["swept"] != "" && cgroupVisible(res.Metadata["container"]) {
		t.Errorf("a call that left nothing was swept anyway: %v", res.Metadata)
	}
	if strings.TrimSpace(res.Stdout) != base || res.Metadata["scope_reused"] != "true" {
		t.Errorf("processes before %s, after a call that detached two: %s (reused %q)", base, res.Stdout, res.Metadata["scope_reused"])
	}
}

// cgroupVisible reports whether this host shows the container's cgroup,
// which lets the provider skip the sweep of a call that left nothing.
func cgroupVisible(short string) bool {
	out, err := exec.Command("docker", "inspect", "-f", "{{.Id}}", short).Output()
	if err != nil {
		return false
	}
	id := strings.TrimSpace(string(out))
	for _, p := range []string{"/sys/fs/cgroup/system.slice/docker-" + id + ".scope", "/sys/fs/cgroup/docker/" + id, "/sys/fs/cgroup/pids/docker/" + id} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

func TestDockerRefusesImages(t *testing.T) {
	imgs := testImages(t)
	for name, tc := range map[string]struct{ image, want string }{
		"volume":  {imgs["volume"], "declares volumes"},
		"missing": {"sha256:" + strings.Repeat("0", 64), "not on this Engine"},
	} {
		t.Run(name, func(t *testing.T) {
			_, h := open(t, fmt.Sprintf("[sandbox.box]\nprovider = \"docker\"\nimage = %q", tc.image))
			_, err := h.Execute(context.Background(), provider.Request{Lang: "sh", Code: "true"})
			if !errors.Is(err, provider.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want ErrConfig saying %q", err, tc.want)
			}
		})
	}
}

// TestDockerHelperProcess is the airlock that TestDockerOrphans kills:
// it leaves a session container and waits.
func TestDockerHelperProcess(t *testing.T) {
	img := os.Getenv("AIRLOCK_DOCKER_HELPER_IMAGE")
	if img == "" {
		t.Skip("helper for TestDockerOrphans")
	}
	_, h := open(t, fmt.Sprintf("[sandbox.box]\nprovider = \"docker\"\nimage = %q\nscope = \"session\"", img))
	res, err := h.Execute(context.Background(), provider.Request{Lang: "sh", Code: "echo up"})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("container", res.Metadata["container"])
	select {}
}

func TestDockerOrphans(t *testing.T) {
	img := testImages(t)["busybox"]
	// Someone else's containers: one without our labels, one of an
	// airlock on another host. Neither may be touched.
	var foreign []string
	for _, args := range [][]string{
		{"create", img, "sleep", "1"},
		{"create", "--label", docker.LabelManaged + "=1", "--label", docker.LabelOwner + "=elsewhere/1/1", img, "sleep", "1"},
	} {
		out, err := exec.Command("docker", args...).Output()
		if err != nil {
			t.Fatal(err)
		}
		foreign = append(foreign, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("docker", append([]string{"rm", "-f"}, foreign...)...).Run() })

	cmd := exec.Command(os.Args[0], "-test.run=^TestDockerHelperProcess$", "-test.v")
	cmd.Env = append(os.Environ(), "AIRLOCK_DOCKER_HELPER_IMAGE="+img)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var id string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "container "); ok {
			id = v
			break
		}
	}
	cmd.Process.Kill() // SIGKILL: no cleanup runs
	cmd.Wait()
	if id == "" {
		t.Fatal("the helper reported no container")
	}
	exists := func(id string) bool { return exec.Command("docker", "inspect", id).Run() == nil }
	if !exists(id) {
		t.Fatal("control: the killed airlock's container is already gone; the test shows nothing")
	}
	// The next start removes it.
	_, h := open(t, fmt.Sprintf("[sandbox.box]\nprovider = \"docker\"\nimage = %q", img))
	if _, err := h.Execute(context.Background(), provider.Request{Lang: "sh", Code: "true"}); err != nil {
		t.Fatal(err)
	}
	if exists(id) {
		t.Errorf("orphan %s survived the next start", id)
	}
	for _, f := range foreign {
		if !exists(f) {
			t.Errorf("container %s, not ours, was removed", f)
		}
	}
}
