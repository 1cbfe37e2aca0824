package linux

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The committed spawnCode is what GNU as makes of spawnSource. Where as
// or objcopy is missing the test skips, except in CI (CI=true), where a
// skip would let the two drift apart unseen.
func TestSpawnCodeAssembles(t *testing.T) {
	if spawnCode == nil {
		t.Skip("no helper spawner for this architecture")
	}
	for _, tool := range []string{"as", "objcopy"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is needed to check spawnCode against spawnSource: %v", tool, err)
			}
			t.Skipf("%s not found: %v", tool, err)
		}
	}
	dir := t.TempDir()
	src, obj, bin := filepath.Join(dir, "spawn.s"), filepath.Join(dir, "spawn.o"), filepath.Join(dir, "spawn.bin")
	if err := os.WriteFile(src, []byte(spawnSource), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"as", "-o", obj, src}, {"objcopy", "-O", "binary", "-j", ".text", obj, bin}} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	got, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, spawnCode) {
		t.Errorf("spawnSource assembles to %d bytes that differ from spawnCode's %d:\n%x\nwant\n%x", len(got), len(spawnCode), got, spawnCode)
	}
}

// With a cgroup v2 directory the helper is cloned into it
// (CLONE_INTO_CGROUP): its /proc/pid/cgroup names it from the start.
func TestSpawnHelperIntoCgroup(t *testing.T) {
	if spawnCode == nil {
		t.Skip("no helper spawner for this architecture")
	}
	var root string
	for _, dir := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		var fs unix.Statfs_t
		if unix.Statfs(dir, &fs) == nil && fs.Type == unix.CGROUP2_SUPER_MAGIC {
			root = dir
			break
		}
	}
	if root == "" {
		t.Skip("no cgroup v2 hierarchy mounted")
	}
	name := "airlock-spawn-test-" + strconv.Itoa(os.Getpid())
	dir := filepath.Join(root, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot make a cgroup to clone into: %v", err)
	}
	defer os.Remove(dir)
	cg, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(cg)
	null, err := unix.Open(os.DevNull, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(null)
	s, err := SpawnHelper(HelperSpawn{
		Flags: unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID,
		Files: [5]int{null, null, null, null, null}, CgroupFD: cg, UID: os.Getuid(), GID: os.Getgid(),
	})
	if err != nil {
		t.Fatal(err)
	}
	b, rerr := os.ReadFile("/proc/" + strconv.Itoa(s.Pid) + "/cgroup")
	s.Abandon()
	reap(s.Pid)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if !strings.Contains(string(b), "0::/"+name+"\n") {
		t.Errorf("the helper's cgroups:\n%s\nwant 0::/%s", b, name)
	}
}

// spawnForTest spawns a helper whose stdio is /dev/null and whose config
// socket (descriptor 3) stays open in conf, so that stage 2, once
// released, blocks reading its config.
func spawnForTest(t *testing.T) (s *Spawned, conf int) {
	t.Helper()
	return spawnForTestReleased(t, false)
}

// spawnForTestReleased is spawnForTest, released by SpawnHelper itself
// when release is set (HelperSpawn.Release).
func spawnForTestReleased(t *testing.T, release bool) (s *Spawned, conf int) {
	t.Helper()
	null, err := unix.Open(os.DevNull, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(null)
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(sp[1])
	s, err = SpawnHelper(HelperSpawn{
		Flags: unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS,
		Files: [5]int{null, null, null, sp[1], null}, CgroupFD: -1, UID: os.Getuid(), GID: os.Getgid(),
		Release: release,
	})
	if err != nil {
		unix.Close(sp[0])
		t.Fatal(err)
	}
	return s, sp[0]
}

// procStatus returns the fields of /proc/pid/status.
func procStatus(pid int) (map[string]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			m[k] = strings.TrimSpace(v)
		}
	}
	return m, nil
}

// A spawned helper is this process's own child (CLONE_PARENT), in new
// user and pid namespaces with this uid mapped to itself, the leader of
// its own session, with the four ambient capabilities, running stage 2:
// released by the caller (Spawned.Release) or by SpawnHelper itself
// (HelperSpawn.Release), as the supervisor's helpers are.
func TestSpawnHelper(t *testing.T) {
	if spawnCode == nil {
		t.Skip("no helper spawner for this architecture")
	}
	for _, atOnce := range []bool{false, true} {
		t.Run(fmt.Sprintf("release at once %v", atOnce), func(t *testing.T) { testSpawnHelper(t, atOnce) })
	}
}

func testSpawnHelper(t *testing.T, atOnce bool) {
	s, conf := spawnForTestReleased(t, atOnce)
	defer unix.Close(conf)
	pid := s.Pid
	defer func() {
		unix.Kill(pid, unix.SIGKILL)
		reap(pid)
	}()
	if !atOnce {
		if err := s.Release(os.Getuid(), os.Getgid()); err != nil {
			t.Fatal(err)
		}
	}
	// Stage 2 is running once its argv[0] is Stage2Arg0 (the exec done).
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if string(b) == Stage2Arg0+"\x00" {
			break
		}
		if time.Now().After(deadline) {
			st, _ := procStatus(pid)
			t.Fatalf("the helper never ran stage 2: cmdline %q, status %v", b, st)
		}
		time.Sleep(time.Millisecond)
	}
	st, err := procStatus(pid)
	if err != nil {
		t.Fatal(err)
	}
	if st["PPid"] != strconv.Itoa(os.Getpid()) {
		t.Errorf("the helper's parent is %s, want this process %d", st["PPid"], os.Getpid())
	}
	if f := strings.Fields(st["NSpid"]); len(f) != 2 || f[1] != "1" {
		t.Errorf("NSpid %q: want pid 1 of a new pid namespace", st["NSpid"])
	}
	if amb := st["CapAmb"]; amb != "0000000000241100" {
		t.Errorf("CapAmb %s, want CAP_SETPCAP, CAP_NET_ADMIN, CAP_SYS_CHROOT, CAP_SYS_ADMIN (0000000000241100)", amb)
	}
	if sid, err := unix.Getsid(pid); err != nil || sid != pid {
		t.Errorf("session %d (%v): want the helper's own", sid, err)
	}
	umap, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/uid_map")
	if f := strings.Fields(string(umap)); len(f) != 3 || f[0] != strconv.Itoa(os.Getuid()) || f[1] != f[0] || f[2] != "1" {
		t.Errorf("uid_map %q: want this uid mapped to itself", umap)
	}
	var own, its unix.Stat_t
	if unix.Stat("/proc/self/ns/user", &own) != nil || unix.Stat("/proc/"+strconv.Itoa(pid)+"/ns/user", &its) != nil || own.Ino == its.Ino {
		t.Errorf("the helper is in this process's user namespace")
	}
}

// spawnChildEnv makes the test binary a supervisor that spawns a helper,
// prints its pid and waits to be killed: "before-maps" stops short of
// Release, "after-maps" after it.
const spawnChildEnv = "AIRLOCK_TEST_SPAWN_CHILD"

func TestSpawnChild(t *testing.T) {
	mode := os.Getenv(spawnChildEnv)
	if mode == "" {
		t.Skip("run by TestSpawnedHelperDiesWithSupervisor")
	}
	s, _ := spawnForTest(t)
	if mode == "after-maps" {
		if err := s.Release(os.Getuid(), os.Getgid()); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Println(s.Pid)
	select {}
}

// A supervisor SIGKILLed after the spawner has cloned the helper, before
// or after it wrote the maps, leaves no helper running: host-side, the
// helper's pid is gone (or a zombie awaiting its new parent's wait).
func TestSpawnedHelperDiesWithSupervisor(t *testing.T) {
	if spawnCode == nil {
		t.Skip("no helper spawner for this architecture")
	}
	for _, mode := range []string{"before-maps", "after-maps"} {
		t.Run(mode, func(t *testing.T) {
			c := exec.Command(os.Args[0], "-test.run=^TestSpawnChild$", "-test.count=1")
			c.Env = append(os.Environ(), spawnChildEnv+"="+mode)
			out, err := c.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			pid, perr := strconv.Atoi(strings.TrimSpace(line))
			if err != nil || perr != nil {
				c.Process.Kill()
				c.Wait()
				t.Fatalf("the supervisor said %q (%v, %v)", line, err, perr)
			}
			if mode == "after-maps" {
				// It must be alive first, or its end proves nothing.
				if !alive(pid) {
					t.Fatalf("helper %d not running before its supervisor was killed", pid)
				}
			}
			c.Process.Kill()
			c.Wait()
			deadline := time.Now().Add(10 * time.Second)
			for alive(pid) {
				if time.Now().After(deadline) {
					st, _ := procStatus(pid)
					unix.Kill(pid, unix.SIGKILL)
					t.Fatalf("helper %d still running after its supervisor was killed: %v", pid, st)
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
}

// alive reports whether pid is a process that has not exited.
func alive(pid int) bool {
	st, err := procStatus(pid)
	return err == nil && !strings.HasPrefix(st["State"], "Z") && !strings.HasPrefix(st["State"], "X")
}
