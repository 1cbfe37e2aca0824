package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/airlockhq/airlock/internal/syncbuf"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// The browser tests run the real daemon: the airlock binary built from this
// module, started as "airlock serve" on a loopback port with its own SQLite
// database, and a token made by "airlock serve token create".

var (
	buildOnce  sync.Once
	airlockBin string
	buildErr   error
)

// airlock builds cmd/airlock once per test binary.
func airlock(t *testing.T) string {
	t.Helper()
	// A prebuilt binary, for a run that cannot build (another user's
	// module cache).
	if p := os.Getenv("AIRLOCK_TEST_BIN"); p != "" {
		return p
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "airlock-web-test-")
		if err != nil {
			buildErr = err
			return
		}
		airlockBin = filepath.Join(dir, "airlock")
		out, err := exec.Command("go", "build", "-o", airlockBin, "github.com/airlockhq/airlock/cmd/airlock").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return airlockBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if airlockBin != "" {
		os.RemoveAll(filepath.Dir(airlockBin))
	}
	os.Exit(code)
}

// daemon is one "airlock serve" with its database, restartable on the
// same address.
type daemon struct {
	URL   string // http://127.0.0.1:PORT
	Token string

	t      *testing.T
	args   []string
	env    []string
	logs   syncbuf.Buffer
	cmd    *exec.Cmd
	exited chan error
}

var tokenRE = regexp.MustCompile(`alk_[A-Za-z0-9_-]+`)

// startDaemon runs "airlock serve" (with flags added) on a fresh database
// and state directory, waits until /healthz answers and stops the daemon
// (by its pid) when the test ends.
func startDaemon(t *testing.T, flags ...string) *daemon {
	t.Helper()
	bin := airlock(t)
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "airlock.db")
	env := append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(dir, "state"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))

	tok := exec.Command(bin, "serve", "token", "create", "--name", "browser-test", "--db", db)
	tok.Env = env
	out, err := tok.CombinedOutput()
	if err != nil {
		t.Fatalf("airlock serve token create: %v\n%s", err, out)
	}
	token := tokenRE.FindString(string(out))
	if token == "" {
		t.Fatalf("airlock serve token create printed no token:\n%s", out)
	}

	addr := freeLoopbackAddr(t)
	d := &daemon{URL: "http://" + addr, Token: token, t: t, env: env,
		args: append([]string{bin, "serve", "--addr", addr, "--db", db}, flags...)}
	t.Cleanup(func() {
		d.kill()
		if t.Failed() {
			t.Logf("airlock serve output:\n%s", d.logs.String())
		}
	})
	d.start()
	return d
}

// start runs the daemon and waits until it answers.
func (d *daemon) start() {
	t := d.t
	t.Helper()
	d.cmd = exec.Command(d.args[0], d.args[1:]...)
	d.cmd.Env = d.env
	d.cmd.Stdout = &d.logs
	d.cmd.Stderr = &d.logs
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	d.exited = exited
	go func(c *exec.Cmd) { exited <- c.Wait() }(d.cmd)
	for i := 0; ; i++ {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("airlock serve exited: %v\n%s", err, d.logs.String())
		default:
		}
		res, err := http.Get(d.URL + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		if i == 300 {
			t.Fatalf("airlock serve did not answer /healthz on %s: %v\n%s", d.URL, err, d.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill ends the daemon this test started, by its pid, and waits for it.
func (d *daemon) kill() {
	if d.cmd == nil {
		return
	}
	_ = d.cmd.Process.Kill()
	<-d.exited
	d.cmd = nil
}

// freeLoopbackAddr returns a loopback address with a port nothing listens
// on at the moment.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// decision is the answer of POST /v1/decide.
type decision struct {
	Decision   string `json:"decision"`
	Reason     string `json:"reason"`
	Rule       string `json:"rule"`
	ApprovalID string `json:"approval_id"`
	Grant      string `json:"grant"`
}

// decideReq is the body of POST /v1/decide.
type decideReq struct {
	Tool      string `json:"tool"`
	Input     any    `json:"input"`
	Workspace string `json:"workspace"`
	Agent     string `json:"agent,omitempty"`
	Session   string `json:"session,omitempty"`
	Wait      string `json:"wait,omitempty"`
}

// decide is an agent's client: it POSTs /v1/decide and returns the answer.
func (d *daemon) decide(ctx context.Context, req decideReq) (decision, error) {
	var out decision
	err := d.do(ctx, http.MethodPost, "/v1/decide", req, &out)
	return out, err
}

// do sends one authenticated JSON request.
func (d *daemon) do(ctx context.Context, method, path string, body, out any) error {
	var rd *bytes.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequestWithContext(ctx, method, d.URL+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+d.Token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(res.Body); err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: HTTP %d: %s", method, path, res.StatusCode, strings.TrimSpace(buf.String()))
	}
	if out != nil {
		return json.Unmarshal(buf.Bytes(), out)
	}
	return nil
}
