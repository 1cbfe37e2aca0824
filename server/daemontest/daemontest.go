// Package daemontest runs real `airlock serve` processes for the tests
// that need more than one daemon, or a daemon that dies: replicas sharing a
// PostgreSQL database, restarts and SIGKILLs (the durability tests), and
// the load benchmark (bench/daemon). It builds cmd/airlock and cmd/airlock-server, starts airlock serve on a
// free loopback port with its own HOME and state directories (so no policy
// file of the machine's user leaks in), and talks to it over HTTP.
//
// What it does not do: start databases (package pgtest gives a PostgreSQL
// schema), or decide what a test checks.
package daemontest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/airlockhq/airlock/internal/airlockbin"
	"github.com/airlockhq/airlock/internal/syncbuf"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// Build compiles airlock and airlock-server (which runs "airlock serve")
// into dir and returns airlock's path.
func Build(dir string) (string, error) {
	return airlockbin.Build(dir)
}

// Env is the environment for an airlock whose home, config and state are
// under dir: the machine's user's policy files and databases stay out.
func Env(dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "AIRLOCK_AUDIT_LOG":
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"HOME="+filepath.Join(dir, "home"),
		"XDG_STATE_HOME="+filepath.Join(dir, "state"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
}

// Workspace makes a workspace under dir whose .airlock/policy.toml allows
// the Bash commands given (exact rules, e.g. "echo hello"), and returns its
// path.
func Workspace(dir string, allow ...string) (string, error) {
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(filepath.Join(ws, ".airlock"), 0o755); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range allow {
		fmt.Fprintf(&b, "[[rule]]\neffect = \"allow\"\nmatch = %q\n\n", "Bash("+c+")")
	}
	return ws, os.WriteFile(filepath.Join(ws, ".airlock", "policy.toml"), []byte(b.String()), 0o644)
}

// CreateToken runs `airlock serve token create --db db ARGS...` (the
// role and scope, e.g. --role agent --agent a --workspace WS) and returns
// the token it prints.
func CreateToken(bin, db string, env []string, args ...string) (string, error) {
	cmd := exec.Command(bin, append([]string{"serve", "token", "create", "--name", "test", "--db", db}, args...)...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("airlock serve token create: %v: %s", err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

// Serve runs `airlock serve ARGS... --db db` (token list, workspace add,
// ...) and returns its error with what it wrote to stderr.
func Serve(bin, db string, env []string, args ...string) error {
	cmd := exec.Command(bin, append(append([]string{"serve"}, args...), "--db", db)...)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("airlock serve %v: %v: %s", args, err, out)
	}
	return nil
}

// Options says how to start a daemon.
type Options struct {
	Bin  string   // the airlock binary (Build)
	DB   string   // --db
	Env  []string // the process environment (Env)
	Args []string // more flags, e.g. --approval-ttl 1m
}

// Daemon is one running `airlock serve`.
type Daemon struct {
	URL string // http://127.0.0.1:PORT

	cmd    *exec.Cmd
	logs   *syncbuf.Buffer
	exited chan struct{}
	err    error // Wait's, once exited is closed
}

var listening = regexp.MustCompile(`listening on (http://127\.0\.0\.1:[0-9]+)`)

// Start starts a daemon on a free loopback port and returns once it
// listens.
func Start(ctx context.Context, o Options) (*Daemon, error) {
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--db", o.DB}, o.Args...)
	cmd := exec.Command(o.Bin, args...)
	cmd.Env = o.Env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting airlock serve: %w", err)
	}
	d := &Daemon{cmd: cmd, logs: &syncbuf.Buffer{}, exited: make(chan struct{})}
	found := make(chan string, 1)
	go func() {
		// Copy every line of the daemon's log, watching for the address.
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			d.logs.WriteString(line + "\n")
			if m := listening.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(d.logs, stderr) // past a line too long to scan
		d.err = cmd.Wait()
		close(d.exited)
	}()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	select {
	case d.URL = <-found:
		return d, nil
	case <-d.exited:
		return nil, fmt.Errorf("airlock serve exited before it listened (%v):\n%s", d.err, d.logs.String())
	case <-ctx.Done():
		d.Kill()
		return nil, fmt.Errorf("airlock serve did not listen within a minute:\n%s", d.logs.String())
	}
}

// Pid is the daemon's process id.
func (d *Daemon) Pid() int { return d.cmd.Process.Pid }

// Logs returns what the daemon wrote to stderr so far.
func (d *Daemon) Logs() string { return d.logs.String() }

// Stop sends SIGTERM and waits for the daemon to exit; it returns the
// exit error (nil after a clean stop).
func (d *Daemon) Stop() error {
	select {
	case <-d.exited:
		return d.err
	default:
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
		return d.err
	case <-time.After(30 * time.Second):
		d.Kill()
		return errors.New("airlock serve did not stop within 30s of SIGTERM; killed")
	}
}

// Kill sends SIGKILL and waits for the process to be gone: nothing it did
// not finish before the signal happens after Kill returns.
func (d *Daemon) Kill() {
	select {
	case <-d.exited:
		return
	default:
	}
	_ = d.cmd.Process.Kill()
	<-d.exited
}

// Client calls a daemon's API with an agent's token and a person's.
type Client struct {
	URL   string
	Token string // an agent's: /v1/decide and /v1/exec go with it
	// Person is a person's token: every other request goes with it ("":
	// with Token).
	Person string
	HTTP   *http.Client // nil: http.DefaultClient
}

// tokenFor is the token a request goes with: the agent's to decide and
// run code, the person's for the rest.
func (c *Client) tokenFor(method, path string) string {
	if c.Person == "" || method == "POST" && (path == "/v1/decide" || path == "/v1/exec") {
		return c.Token
	}
	return c.Person
}

// Error is a non-2xx answer.
type Error struct {
	Status int
	Code   string `json:"code"`
	Msg    string `json:"error"`
}

func (e *Error) Error() string { return fmt.Sprintf("HTTP %d %s: %s", e.Status, e.Code, e.Msg) }

// Do sends body (JSON, when not nil) to path and decodes a 2xx answer into
// out (when not nil). A non-2xx answer is an *Error.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.tokenFor(method, path))
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		e := &Error{Status: resp.StatusCode}
		_ = json.Unmarshal(data, e)
		return e
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("decoding %s %s: %w: %s", method, path, err, data)
		}
	}
	return nil
}

// Decision is /v1/decide's answer.
type Decision struct {
	Decision   string `json:"decision"`
	Reason     string `json:"reason"`
	Rule       string `json:"rule"`
	ApprovalID string `json:"approval_id"`
	Grant      string `json:"grant"`
	Grants     []struct {
		Kind   string `json:"kind"`
		Target string `json:"target"`
		Token  string `json:"token"`
	} `json:"grants"`
}

// Approval is the part of the API's approval the tests read.
type Approval struct {
	ID       string `json:"id"`
	State    string `json:"state"`
	Answer   string `json:"answer"`
	Decision string `json:"decision"`
}

// Decide asks the daemon about a Bash command in ws. extra adds fields to
// the request (wait, execution_id, session...).
func (c *Client) Decide(ctx context.Context, ws, command string, extra map[string]any) (Decision, error) {
	body := map[string]any{"tool": "Bash", "input": map[string]string{"command": command}, "workspace": ws}
	for k, v := range extra {
		body[k] = v
	}
	var d Decision
	err := c.Do(ctx, "POST", "/v1/decide", body, &d)
	return d, err
}

// Answer answers an approval.
func (c *Client) Answer(ctx context.Context, id, answer string) (Approval, error) {
	var a Approval
	err := c.Do(ctx, "POST", "/v1/approvals/"+id, map[string]string{"answer": answer}, &a)
	return a, err
}

// Event is one Server-Sent Event of /v1/events.
type Event struct {
	ID, Name string
	Approval Approval
}

// Events opens /v1/events and returns once the daemon has started the
// stream (so every event from then on arrives on the channel). The channel
// closes when the stream ends; cancel ctx to end it.
func (c *Client) Events(ctx context.Context) (<-chan Event, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", c.URL+"/v1/events", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.tokenFor("GET", "/v1/events"))
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, &Error{Status: resp.StatusCode}
	}
	br := bufio.NewReader(resp.Body)
	// The daemon picks its starting point before the first byte; the
	// opening comment says it has.
	if _, err := br.ReadString('\n'); err != nil {
		resp.Body.Close()
		return nil, fmt.Errorf("reading the event stream: %w", err)
	}
	ch := make(chan Event, 64)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		var ev Event
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case line == "":
				if ev.Name != "" {
					select {
					case ch <- ev:
					case <-ctx.Done():
						return
					}
				}
				ev = Event{}
			case strings.HasPrefix(line, "id: "):
				ev.ID = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				ev.Name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.Approval)
			}
		}
	}()
	return ch, nil
}
