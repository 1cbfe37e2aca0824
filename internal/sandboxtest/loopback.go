package sandboxtest

import (
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// FreePort is a loopback port nothing listens on now, for a server the
// test is about to start (such as one a sandbox publishes).
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// HTTPGet fetches http://addr/ from the host and returns the body,
// retrying while the server starts until wait has passed (wait 0: one
// try), then returning the last error.
func HTTPGet(addr string, wait time.Duration) (string, error) {
	var err error
	for end := time.Now().Add(wait); ; time.Sleep(100 * time.Millisecond) {
		var resp *http.Response
		c := http.Client{Timeout: 5 * time.Second}
		if resp, err = c.Get("http://" + addr + "/"); err == nil {
			b, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			return string(b), rerr
		}
		if time.Now().After(end) {
			return "", err
		}
	}
}
