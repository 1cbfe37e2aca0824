package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// TestRunPublish: airlock run --publish H:P -- python3 -m http.server P
// (the default --net none) serves the workspace to a host GET on
// 127.0.0.1:H; the port P itself stays unreachable on the host; the
// Report and the audit log name the published port. As root and uid
// 65534.
func TestRunPublish(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	bin := buildAirlock(t)
	rootWS := t.TempDir()
	type user struct {
		name string
		ws   string
		argv func(args ...string) []string
	}
	users := []user{{"root", rootWS, func(args ...string) []string { return append([]string{bin}, args...) }}}
	if os.Geteuid() == 0 {
		uws, argv := unprivilegedCommand(t, bin)
		users = append(users, user{"uid 65534", uws, func(args ...string) []string { return append([]string{"setpriv"}, argv(args...)...) }})
	}
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(u.ws, "index.html"), []byte("served-from-the-sandbox\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			os.Chmod(filepath.Join(u.ws, "index.html"), 0o644)
			// t.TempDir's parent is root's alone: uid 65534 writes here.
			out, err := os.MkdirTemp("", "airlock-publish-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(out) })
			os.Chmod(out, 0o777)
			report, logPath := filepath.Join(out, "report.json"), filepath.Join(out, "audit.log")
			port, hostPort := sandboxtest.FreePort(t), sandboxtest.FreePort(t)
			argv := u.argv("run", "--workspace", u.ws, "--publish", strconv.Itoa(hostPort)+":"+strconv.Itoa(port),
				"--report", report, "--audit", logPath, "--", "python3", "-m", "http.server", "--bind", "127.0.0.1", strconv.Itoa(port))
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Dir = u.ws
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			page, err := sandboxtest.HTTPGet(net.JoinHostPort("127.0.0.1", strconv.Itoa(hostPort)), 30*time.Second)
			if err != nil || page != "served-from-the-sandbox\n" {
				t.Fatalf("GET 127.0.0.1:%d from the host: %v %q; stderr %q", hostPort, err, page, stderr.String())
			}
			if _, err := sandboxtest.HTTPGet(net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 0); err == nil {
				t.Errorf("the sandbox's port %d itself is reachable on the host", port)
			}
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
			want := "127.0.0.1:" + strconv.Itoa(hostPort) + "->" + strconv.Itoa(port)
			if !strings.Contains(stderr.String(), "airlock: published: http://127.0.0.1:"+strconv.Itoa(hostPort)+"/ on the host reaches port "+strconv.Itoa(port)+" in the sandbox") {
				t.Errorf("no published line on stderr: %q", stderr.String())
			}
			rep, _ := os.ReadFile(report)
			if !strings.Contains(string(rep), `"host_port": `+strconv.Itoa(hostPort)) {
				t.Errorf("the Report does not list the published port:\n%s", rep)
			}
			events := readEvents(t, logPath)
			n := 0
			for _, ev := range events {
				if ps, ok := ev.Detail["published"].([]any); ok && len(ps) == 1 && ps[0] == want {
					n++
				}
			}
			if n != 2 {
				t.Errorf("want the spawn and exit events to name %s, %d do: %+v", want, n, events)
			}
		})
	}
}

// TestPublishFlag: --publish's values and its usage errors.
func TestPublishFlag(t *testing.T) {
	for _, c := range []struct {
		in             string
		addr           string
		hostPort, port int
		err            bool
	}{
		{"8000", "127.0.0.1", 8000, 8000, false},
		{"18000:8000", "127.0.0.1", 18000, 8000, false},
		{"0.0.0.0:18000:8000", "0.0.0.0", 18000, 8000, false},
		{"192.168.7.1:80:8000", "192.168.7.1", 80, 8000, false},
		{"[::]:18000:8000", "::", 18000, 8000, false},
		{"[::ffff:10.0.0.1]:18000:8000", "10.0.0.1", 18000, 8000, false},
		{"0", "", 0, 0, true},
		{"x:80", "", 0, 0, true},
		{"70000", "", 0, 0, true},
		{"", "", 0, 0, true},
		{":8000", "", 0, 0, true},
		{":1:8000", "", 0, 0, true},
		{"localhost:18000:8000", "", 0, 0, true}, // a name, not an address
		{"[fe80::1%eth0]:18000:8000", "", 0, 0, true},
		{"0.0.0.0:x:8000", "", 0, 0, true},
	} {
		p, err := parsePublish(c.in)
		if (err != nil) != c.err || (!c.err && (p.HostPort != c.hostPort || p.Port != c.port || p.HostAddr != c.addr)) {
			t.Errorf("parsePublish(%q) = %+v, %v", c.in, p, err)
		}
		if err != nil && !strings.Contains(err.Error(), "--publish 18000:8000") {
			t.Errorf("parsePublish(%q): the error names no fix: %v", c.in, err)
		}
	}
}

// TestRunPublishAddress: --publish ADDR:HOST_PORT:PORT on an address of
// this host that is not loopback (the test's dummy interface) is a
// usage error naming network.publish_addresses under a profile without
// it, with nothing listening and nothing run; under a profile file that
// lists the address, the command's server answers there. As root and
// uid 65534.
func TestRunPublishAddress(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	bin := buildAirlock(t)
	addr := sandboxtest.HostAddress(t)
	type user struct {
		name string
		ws   string
		argv func(args ...string) []string
	}
	users := []user{{"root", t.TempDir(), func(args ...string) []string { return append([]string{bin}, args...) }}}
	if os.Geteuid() == 0 {
		uws, argv := unprivilegedCommand(t, bin)
		users = append(users, user{"uid 65534", uws, func(args ...string) []string { return append([]string{"setpriv"}, argv(args...)...) }})
	}
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(u.ws, "index.html"), []byte("served-on-"+addr+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			os.Chmod(filepath.Join(u.ws, "index.html"), 0o644)
			dir, err := os.MkdirTemp("", "airlock-publish-addr-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			os.Chmod(dir, 0o755)
			prof := filepath.Join(dir, "wide.toml")
			if err := os.WriteFile(prof, []byte("preset = \"workspace\"\n[network]\npublish_addresses = [\""+addr+"\"]\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			port, hostPort := sandboxtest.FreePort(t), sandboxtest.FreePort(t)
			target := net.JoinHostPort(addr, strconv.Itoa(hostPort))
			run := func(extra ...string) *exec.Cmd {
				args := append([]string{"run", "--workspace", u.ws}, extra...)
				args = append(args, "--publish", target+":"+strconv.Itoa(port), "--",
					"sh", "-c", "echo ran > ran.txt; exec python3 -m http.server --bind 127.0.0.1 "+strconv.Itoa(port))
				argv := u.argv(args...)
				cmd := exec.Command(argv[0], argv[1:]...)
				cmd.Dir = u.ws
				return cmd
			}

			refused := run()
			out, err := refused.CombinedOutput()
			if code := refused.ProcessState.ExitCode(); err == nil || code != exitUsage || !strings.Contains(string(out), "publish_addresses") {
				t.Fatalf("--publish on %s without publish_addresses: exit %d (%v), want %d and the setting named:\n%s", addr, code, err, exitUsage, out)
			}
			if _, err := os.Stat(filepath.Join(u.ws, "ran.txt")); err == nil {
				t.Error("the refused run ran its command")
			}
			if c, err := net.DialTimeout("tcp", target, 2*time.Second); err == nil {
				c.Close()
				t.Errorf("something listens on %s after the refusal", target)
			}

			allowed := run("--profile", prof)
			var stderr strings.Builder
			allowed.Stderr = &stderr
			if err := allowed.Start(); err != nil {
				t.Fatal(err)
			}
			defer allowed.Process.Kill()
			page, err := sandboxtest.HTTPGet(target, 30*time.Second)
			if err != nil || page != "served-on-"+addr+"\n" {
				t.Fatalf("GET %s with publish_addresses = [%q]: %v %q; stderr %q", target, addr, err, page, stderr.String())
			}
			allowed.Process.Signal(syscall.SIGTERM)
			allowed.Wait()
			if !strings.Contains(stderr.String(), "airlock: published: http://"+target+"/ on the host reaches port "+strconv.Itoa(port)) {
				t.Errorf("no published line on stderr: %q", stderr.String())
			}
		})
	}
}
