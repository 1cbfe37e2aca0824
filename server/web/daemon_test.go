package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/airlockhq/airlock/internal/airlockbin"
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
// database, a person's token made by "airlock serve token create --role
// person" (the page's), and an agent's token per agent that decides.

var (
	buildOnce  sync.Once
	airlockBin string
	buildErr   error
)

// airlock builds cmd/airlock (and the cmd/airlock-server it hands serve
// to) once per test binary.
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
		airlockBin, buildErr = airlockbin.Build(dir)
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
	Token string // a person's: the page logs in with it

	bin, db    string
	mu         sync.Mutex
	agents     map[string]string // agent name → its token
	registered map[string]bool   // workspaces registered

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

	addr := freeLoopbackAddr(t)
	d := &daemon{URL: "http://" + addr, t: t, env: env, bin: bin, db: db,
		agents: map[string]string{}, registered: map[string]bool{},
		args: append([]string{bin, "serve", "--addr", addr, "--db", db}, flags...)}
	d.Token = d.cli("token", "create", "--role", "person", "--name", "browser-test")
	t.Cleanup(func() {
		d.kill()
		if t.Failed() {
			t.Logf("airlock serve output:\n%s", d.logs.String())
		}
	})
	d.start()
	return d
}

// cli runs "airlock serve ARGS... --db DB" and returns the token it
// printed, if any.
func (d *daemon) cli(args ...string) string {
	d.t.Helper()
	cmd := exec.Command(d.bin, append(append([]string{"serve"}, args...), "--db", d.db)...)
	cmd.Env = d.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		d.t.Fatalf("airlock serve %v: %v\n%s", args, err, out)
	}
	if args[0] == "token" {
		token := tokenRE.FindString(string(out))
		if token == "" {
			d.t.Fatalf("airlock serve token create printed no token:\n%s", out)
		}
		return token
	}
	return ""
}

// agentToken is agent name's token (made on first use).
func (d *daemon) agentToken(name string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if tok, ok := d.agents[name]; ok {
		return tok
	}
	tok := d.cli("token", "create", "--role", "agent", "--agent", name)
	d.agents[name] = tok
	return tok
}

// register registers workspace ws with the daemon (once).
func (d *daemon) register(ws string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.registered[ws] {
		d.cli("workspace", "add", ws)
		d.registered[ws] = true
	}
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

// decide is an agent's client: it POSTs /v1/decide with the token of the
// agent req names (its workspace registered) and returns the answer.
func (d *daemon) decide(ctx context.Context, req decideReq) (decision, error) {
	agent := req.Agent
	if agent == "" {
		agent = "browser-test"
	}
	d.register(req.Workspace)
	var out decision
	err := d.doAs(ctx, d.agentToken(agent), http.MethodPost, "/v1/decide", req, &out)
	return out, err
}

// do sends one JSON request with the person's token.
func (d *daemon) do(ctx context.Context, method, path string, body, out any) error {
	return d.doAs(ctx, d.Token, method, path, body, out)
}

// doAs sends one JSON request with token tok.
func (d *daemon) doAs(ctx context.Context, tok, method, path string, body, out any) error {
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
	req.Header.Set("Authorization", "Bearer "+tok)
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
