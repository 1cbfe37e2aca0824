package sandboxtest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAddress is the IPv4 address the suite assigns to an interface it
// creates. Tests send traffic to it and to loopback only, never to an
// address of the machine they did not create.
const TestAddress = "10.213.7.1"

// HostAddress returns a non-loopback address of this machine that the
// test run itself created. As root it adds a dummy interface holding
// TestAddress and removes it when the test ends; unprivileged, it takes
// the one the root parent made (EnvHostAddr) and skips when there is none.
func HostAddress(t testing.TB) string {
	t.Helper()
	if Unprivileged() {
		addr := os.Getenv(EnvHostAddr)
		if addr == "" {
			t.Skipf("no non-loopback test address: only root can create one; run the suite as root (TestAttacksUnprivileged then hands one to the unprivileged run through %s)", EnvHostAddr)
		}
		if !hasAddress(addr) {
			t.Fatalf("%s=%s is not an address of this machine", EnvHostAddr, addr)
		}
		return addr
	}
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := "airlock" + hex.EncodeToString(b[:]) // 13 bytes; the limit is 15
	ip := func(args ...string) error {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("iproute2 (ip) is not installed; it creates the dummy interface that holds the non-loopback test address")
	}
	// A dummy interface where the kernel has the module; else an empty
	// bridge, which holds an address just as well and carries nothing.
	if err := ip("link", "add", name, "type", "dummy"); err != nil {
		if err2 := ip("link", "add", name, "type", "bridge"); err2 != nil {
			t.Fatalf("create the test interface: %v; %v", err, err2)
		}
	}
	t.Cleanup(func() {
		if err := ip("link", "del", name); err != nil {
			t.Errorf("remove the test interface: %v", err)
		}
	})
	if err := ip("addr", "add", TestAddress+"/32", "dev", name); err != nil {
		t.Fatal(err)
	}
	if err := ip("link", "set", name, "up"); err != nil {
		t.Fatal(err)
	}
	return TestAddress
}

func hasAddress(addr string) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.String() == addr {
			return true
		}
	}
	return false
}

// MakeSetuidBinary copies id(1) into dir, owned by uid and gid owner and
// setuid, so running it shows an effective uid of owner. Only root can
// make it.
func MakeSetuidBinary(t testing.TB, dir string, owner int) string {
	t.Helper()
	src, err := exec.LookPath("id")
	if err != nil {
		t.Fatalf("id(1) not found: %v", err)
	}
	dst := filepath.Join(dir, "id-setuid")
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dst, owner, owner); err != nil {
		t.Fatalf("chown the setuid binary: %v", err)
	}
	// chown clears the setuid bit, so the mode comes after it.
	if err := os.Chmod(dst, 0o755|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	return dst
}

// SetuidBinary returns a setuid copy of id(1) whose owner is not the
// caller, and that owner. As root it makes one owned by uid 1 (daemon);
// unprivileged, it takes the root-owned one the parent made
// (EnvSetuidBinary) and skips when there is none.
func SetuidBinary(t testing.TB) (path string, owner int) {
	t.Helper()
	if Unprivileged() {
		path = os.Getenv(EnvSetuidBinary)
		if path == "" {
			t.Skipf("no setuid binary owned by another user: only root can make one; run the suite as root (TestAttacksUnprivileged hands one over through %s)", EnvSetuidBinary)
		}
		return path, 0
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return MakeSetuidBinary(t, dir, 1), 1
}

// OpenPTY opens a new pseudo-terminal pair on the host; both ends close
// when the test ends.
func OpenPTY(t testing.TB) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty slave: %v", err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// PendingInput returns what is waiting in the input queue of the terminal
// slave (what a shell reading it would get next), without blocking.
func PendingInput(t testing.TB, slave *os.File) string {
	t.Helper()
	fd := int(slave.Fd())
	n, err := unix.IoctlGetInt(fd, unix.TIOCINQ)
	if err != nil {
		t.Fatalf("TIOCINQ: %v", err)
	}
	if n == 0 {
		return ""
	}
	// Read through a non-canonical, non-blocking duplicate so that a
	// queue without a newline is read too and the test cannot hang.
	dup, err := unix.Dup(fd)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dup)
	tio, err := unix.IoctlGetTermios(dup, unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	raw := *tio
	raw.Lflag &^= unix.ICANON
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 0, 0
	if err := unix.IoctlSetTermios(dup, unix.TCSETS, &raw); err != nil {
		t.Fatal(err)
	}
	defer unix.IoctlSetTermios(dup, unix.TCSETS, tio)
	buf := make([]byte, n)
	got, _ := unix.Read(dup, buf)
	return string(buf[:max(got, 0)])
}

// BlockDevice returns the device node of a disk of this machine, from
// /sys/block: the first one the caller can open read-only on the host
// (real disks before loop, zram and ram devices), so a control can open
// it; when it can open none (an unprivileged caller, or a host that
// forbids even root its disk), the first one that exists. It skips when
// the machine shows no block device at all.
func BlockDevice(t testing.TB) string {
	t.Helper()
	ents, _ := os.ReadDir("/sys/block")
	var disks, virtual []string
	for _, e := range ents {
		dev := "/dev/" + e.Name()
		var st unix.Stat_t
		if unix.Stat(dev, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFBLK {
			continue
		}
		switch {
		case strings.HasPrefix(e.Name(), "loop"), strings.HasPrefix(e.Name(), "zram"), strings.HasPrefix(e.Name(), "ram"):
			virtual = append(virtual, dev)
		default:
			disks = append(disks, dev)
		}
	}
	all := append(disks, virtual...)
	if len(all) == 0 {
		t.Skip("this machine shows no block device under /sys/block with a node in /dev")
	}
	for _, dev := range all {
		if fd, err := unix.Open(dev, unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
			unix.Close(fd)
			return dev
		}
	}
	return all[0]
}

// OwnCgroupDirs returns this process's cgroup directories, one per
// hierarchy that has the memory, pids or cpu controller (v1) or the single
// v2 directory: the parents of every run's cgroup, which a sandboxed
// command must not move itself into.
func OwnCgroupDirs(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
				dirs = append(dirs, filepath.Join("/sys/fs/cgroup", parts[2]))
			}
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "memory" || c == "pids" || c == "cpu" {
				dirs = append(dirs, filepath.Join("/sys/fs/cgroup", c, parts[2]))
				break
			}
		}
	}
	return dirs
}

// SystemSecretValue is the content of every credential SystemSecrets
// plants; it must never appear in a sandbox's output.
const SystemSecretValue = "airlock-test-system-credential-7c1d"

// SystemSecrets returns a directory under /etc, as a system service
// keeps its credentials (/etc/wireguard), holding key.conf (root's, mode
// 0600), group.conf (root's, 0640, group root) and public.conf (0644,
// the positive control). Names say nothing of what they hold. As root it
// makes one, removed when the test ends; unprivileged, it takes the one
// the parent made (EnvSystemSecrets) and skips when there is none.
func SystemSecrets(t testing.TB) string {
	t.Helper()
	if Unprivileged() {
		dir := os.Getenv(EnvSystemSecrets)
		if dir == "" {
			t.Skip("unprivileged and no root-made credentials under /etc (" + EnvSystemSecrets + ")")
		}
		return dir
	}
	dir, err := os.MkdirTemp("/etc", "airlock-test-")
	if err != nil {
		t.Fatalf("plant credentials under /etc: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, mode := range map[string]os.FileMode{"key.conf": 0o600, "group.conf": 0o640} {
		writeFile(t, filepath.Join(dir, name), mode, SystemSecretValue+"\n")
	}
	writeFile(t, filepath.Join(dir, "public.conf"), 0o644, "public\n")
	return dir
}
