package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/egress"
	"github.com/airlockhq/airlock/internal/airlockbin"
	"github.com/airlockhq/airlock/internal/binaries"
	"github.com/airlockhq/airlock/internal/testnet"
)

// TestRunNet runs airlock run --net against a test host on a veth pair
// (10.213.13.0/24, never an outside address): the allowed host:port
// works, another port is refused with one line on stderr and a denial in
// --report, and --net all still refuses cloud metadata.
func TestRunNet(t *testing.T) {
	testnet.Require(t)
	testnet.RequireTools(t, "curl")
	h := testnet.NewHost(t, "10.213.13.0/24", "fd00:a1:13::/64")
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello cli\n") })}
	go srv.Serve(h.ListenTCP(t, "", 80))
	t.Cleanup(func() { srv.Close() })
	bin := buildAirlock(t)
	ws := t.TempDir()
	host := h.Addr4.String()

	run := func(args ...string) (int, string, string) {
		return runCLI(t, bin, append([]string{"run", "--workspace", ws}, args...)...)
	}

	report := filepath.Join(t.TempDir(), "report.json")
	code, out, errOut := run("--net", host+":80", "--report", report, "--",
		"sh", "-c", "curl -sS --max-time 5 http://"+host+"/ && curl -sS --max-time 5 http://"+host+":81/")
	line := "airlock: blocked connect to " + host + ":81 (port 81 is not allowed for " + host + "; allowed: 80)\n"
	if code != 7 || out != "hello cli\n" || strings.Count(errOut, line) != 1 {
		t.Fatalf("exit %d stdout %q stderr %q; want 7 (curl's), the page, and once %q", code, out, errOut, line)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Denials []map[string]string `json:"denials"`
	}
	if err := json.Unmarshal(b, &res); err != nil || len(res.Denials) != 1 || res.Denials[0]["protocol"] != "tcp" || res.Denials[0]["target"] != host+":81" {
		t.Fatalf("report denials %s (%v)", b, err)
	}

	code, _, errOut = run("--net", "all", "--", "curl", "-sS", "--max-time", "5", "http://169.254.169.254/")
	if code == 0 || !strings.Contains(errOut, "airlock: blocked connect to 169.254.169.254:80 (169.254.169.254 is a cloud metadata address") {
		t.Fatalf("--net all and metadata: exit %d stderr %q", code, errOut)
	}
	code, out, _ = run("--net", "all,"+host+":80", "--", "curl", "-sS", "--max-time", "5", "http://"+host+"/")
	if code != 0 || out != "hello cli\n" {
		t.Fatalf("--net all with a private exception: exit %d stdout %q", code, out)
	}
	code, _, errOut = run("--net", "all,example.com", "--", "true")
	if code != 125 || !strings.Contains(errOut, "IP literals") {
		t.Fatalf("--net all,NAME: exit %d stderr %q", code, errOut)
	}
}

// TestRunNetUnprivileged runs airlock run --net as uid 65534. This
// machine's /dev/net/tun is root's alone (mode 0600), which is a setup
// error with a clear message; with a TUN device the user may open (here a
// 0666 node bound over /dev/net/tun in a private mount namespace, so the
// host is unchanged) the allowlist works for an unprivileged user, the
// connect broker included: a brokered socket shows the host's address,
// another port is refused, and the brokered socket cannot be dissolved
// and aimed elsewhere.
func TestRunNetUnprivileged(t *testing.T) {
	testnet.Require(t)
	testnet.RequireTools(t, "python3", "setpriv", "unshare")
	h := testnet.NewHost(t, "10.213.14.0/24", "fd00:a1:14::/64")
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello nobody\n") })}
	go srv.Serve(h.ListenTCP(t, "", 80))
	t.Cleanup(func() { srv.Close() })
	other := testnet.Count(h.ListenTCP(t, "", 81))
	host := h.Addr4.String()

	// Everything uid 65534 needs lives under a directory it can reach.
	root, err := os.MkdirTemp("", "airlock-unprivileged-net-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	ws := filepath.Join(root, "ws")
	for _, d := range []string{root, ws} {
		os.MkdirAll(d, 0o755)
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(ws, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	// airlock-gateway too: it serves the run's network.
	bin, err := airlockbin.CopyTo(buildAirlock(t), root)
	if err != nil {
		t.Fatal(err)
	}
	tun := filepath.Join(root, "tun")
	if err := unix.Mknod(tun, unix.S_IFCHR|0o666, int(unix.Mkdev(10, 200))); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tun, 0o666); err != nil {
		t.Fatal(err)
	}
	script := `
import ctypes, errno, socket, sys
host = sys.argv[1]
s = socket.create_connection((host, 80), timeout=10)
print("local", s.getsockname()[0])
s.sendall(b"GET / HTTP/1.0\r\n\r\n")
print(s.recv(4096).split(b"\r\n\r\n", 1)[-1].decode(), end="")
libc = ctypes.CDLL(None, use_errno=True)
rc = libc.connect(s.fileno(), (ctypes.c_ubyte * 16)(), 16)
print("unspec:", "ok" if rc == 0 else errno.errorcode.get(ctypes.get_errno()))
try:
    s.connect((host, 81))
    print("rearm: ok")
except OSError as e:
    print("rearm:", errno.errorcode.get(e.errno))
t = socket.socket()
try:
    t.connect((host, 81))
    print("port 81: ok")
except OSError as e:
    print("port 81:", errno.errorcode.get(e.errno))
`
	// HOME is the workspace's parent: a workspace that is HOME itself is refused.
	asNobody := []string{"setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "--", "env", "HOME=" + root}
	runArgs := []string{bin, "run", "--workspace", ws, "--net", host + ":80", "--", "python3", "-c", script, host}
	run := func(args ...string) (int, string, string) {
		cmd := exec.Command(args[0], args[1:]...)
		var so, se strings.Builder
		cmd.Stdout, cmd.Stderr = &so, &se
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), so.String(), se.String()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, so.String(), se.String()
	}

	if st, err := os.Stat("/dev/net/tun"); err == nil && st.Mode().Perm()&0o006 == 0 {
		code, _, errOut := run(append(asNobody, runArgs...)...)
		if code != 125 || !strings.Contains(errOut, "/dev/net/tun") {
			t.Errorf("without a TUN device it may open: exit %d stderr %q; want 125 and a line naming /dev/net/tun", code, errOut)
		}
	}

	mountAndDrop := `mount --bind "$0" /dev/net/tun && exec "$@"`
	code, out, errOut := run(append(append([]string{"unshare", "-m", "--propagation", "private", "sh", "-c", mountAndDrop, tun}, asNobody...), runArgs...)...)
	for _, want := range []string{"hello nobody\n", "unspec: EACCES", "rearm: EACCES", "port 81: ECONNREFUSED"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q: exit %d stdout %q stderr %q", want, code, out, errOut)
		}
	}
	if strings.Contains(out, "local "+egress.SandboxIPv4+"\n") || !strings.Contains(out, "local ") {
		t.Errorf("the connection was not brokered: %q", out)
	}
	if !strings.Contains(errOut, "airlock: blocked connect to "+host+":81") {
		t.Errorf("no blocked line for port 81: %q", errOut)
	}
	if n := other.Accepted(); n != 0 {
		t.Fatalf("the test host accepted %d connections on port 81", n)
	}
}

// TestRunNetGatewayMissing: airlock-gateway is what serves a run's
// network; without it beside airlock a run with --net refuses to start
// (exit 125, one line naming it), and one without a network still runs.
func TestRunNetGatewayMissing(t *testing.T) {
	dir := t.TempDir()
	bin, err := airlockbin.CopyTo(buildAirlock(t), dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, binaries.Gateway)); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	code, _, errOut := runCLI(t, bin, "run", "--workspace", ws, "--net", "10.213.15.2:80", "--", "touch", "ran")
	if code != 125 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "needs the egress gateway airlock-gateway") || !strings.Contains(errOut, "go build -o DIR/ ./cmd/...") {
		t.Fatalf("--net without airlock-gateway: exit %d stderr %q; want 125 and one line naming airlock-gateway and how to build it", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
		t.Fatal("the command ran without its egress gateway")
	}
	if code, _, errOut := runCLI(t, bin, "run", "--workspace", ws, "--", "touch", "ran"); code != 0 {
		t.Fatalf("a run without a network needs no gateway: exit %d stderr %q", code, errOut)
	}
}

// TestRunNetGatewayDies: when the gateway's process dies during a run,
// the sandbox's network is cut off (the next connection fails; nothing
// passes unchecked), and the report says that the gateway ended.
func TestRunNetGatewayDies(t *testing.T) {
	testnet.Require(t)
	testnet.RequireTools(t, "curl")
	h := testnet.NewHost(t, "10.213.15.0/24", "fd00:a1:15::/64")
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello cli\n") })}
	go srv.Serve(h.ListenTCP(t, "", 80))
	t.Cleanup(func() { srv.Close() })
	bin := buildAirlock(t)
	gateway := filepath.Join(filepath.Dir(bin), binaries.Gateway)
	ws := t.TempDir()
	host := h.Addr4.String()
	report := filepath.Join(t.TempDir(), "report.json")

	done := make(chan struct{})
	killed := make(chan int, 1)
	go func() {
		defer close(killed)
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if _, err := os.Stat(filepath.Join(ws, "first")); err != nil {
				continue
			}
			pid := processOf(gateway)
			if pid > 0 {
				unix.Kill(pid, unix.SIGKILL)
			}
			os.WriteFile(filepath.Join(ws, "gone"), nil, 0o644)
			killed <- pid
			return
		}
	}()
	code, out, errOut := runCLI(t, bin, "run", "--workspace", ws, "--net", host+":80", "--report", report, "--",
		"sh", "-c", "curl -sS --max-time 5 http://"+host+"/ && touch first && while [ ! -e gone ]; do sleep 0.05; done; curl -sS --max-time 3 http://"+host+"/")
	close(done)
	if pid := <-killed; pid <= 0 {
		t.Fatalf("no airlock-gateway process found to kill (exit %d stdout %q stderr %q)", code, out, errOut)
	}
	if code == 0 || out != "hello cli\n" {
		t.Fatalf("exit %d stdout %q stderr %q; want the first page only, and the second connection to fail", code, out, errOut)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "the egress gateway ended during the run") {
		t.Fatalf("the report does not say the gateway ended: %s", b)
	}
	// The user sees it too, not only the Report: the end of the run says
	// every refusal no line said while it ran.
	if !strings.Contains(errOut, "the egress gateway ended during the run") {
		t.Fatalf("stderr does not say the gateway ended: %q", errOut)
	}
}

// processOf returns the pid of a process running the executable at path
// (0: none).
func processOf(path string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if exe, err := os.Readlink("/proc/" + e.Name() + "/exe"); err == nil && exe == path {
			return pid
		}
	}
	return 0
}
