package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/airlockhq/airlock/audit"
	"github.com/airlockhq/airlock/server/store"
	"github.com/airlockhq/airlock/server/store/sqlite"
)

// daemon is a real 'airlock serve' process.
type daemon struct {
	cmd  *exec.Cmd
	url  string
	done chan error
}

func serveEnv(dir string) []string {
	return append(os.Environ(), "HOME="+filepath.Join(dir, "home"), "XDG_STATE_HOME="+filepath.Join(dir, "state"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
}

func startDaemon(t *testing.T, bin, dir, dsn string) *daemon {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", dsn)
	cmd.Env = serveEnv(dir)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &daemon{cmd: cmd, done: make(chan error, 1)}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "airlock serve: listening on "); ok {
			d.url, _, _ = strings.Cut(u, " ")
			break
		}
		t.Log(sc.Text())
	}
	if d.url == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the daemon did not start")
	}
	go io.Copy(io.Discard, stderr)
	go func() { d.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-d.done
		}
	})
	return d
}

// kill SIGKILLs the daemon and waits for it to be gone.
func (d *daemon) kill(t *testing.T) {
	t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-d.done
}

func (d *daemon) call(t *testing.T, token, method, path, body string, out any) int {
	t.Helper()
	req, _ := http.NewRequest(method, d.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
	}
	return resp.StatusCode
}

// serveSetup builds airlock and makes a database with two tokens: the
// agent "a"'s, for the workspace ws, and a person's.
func serveSetup(t *testing.T) (bin, dir, dsn, agent, person, ws string) {
	t.Helper()
	bin = buildAirlock(t)
	dir = t.TempDir()
	ws = filepath.Join(dir, "ws")
	for _, d := range []string{ws, filepath.Join(dir, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dsn = "sqlite:" + filepath.Join(dir, "airlock.db")
	agent = createServeToken(t, bin, dir, dsn, "--role", "agent", "--agent", "a", "--workspace", ws)
	person = createServeToken(t, bin, dir, dsn, "--role", "person", "--name", "me")
	return
}

// createServeToken runs 'airlock serve token create' with args.
func createServeToken(t *testing.T, bin, dir, dsn string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "token", "create", "--db", dsn}, args...)...)
	cmd.Env = serveEnv(dir)
	code, out, errOut := runCmd(t, cmd)
	token := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(token, "alk_") || len(token) != 47 || !strings.Contains(errOut, "shown only this once") {
		t.Fatalf("token create %v: %d %q %q", args, code, out, errOut)
	}
	return token
}

func openDB(t *testing.T, dsn string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), strings.TrimPrefix(dsn, "sqlite:"))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

type decided struct {
	Decision   string `json:"decision"`
	ApprovalID string `json:"approval_id"`
	Approval   string `json:"approval"`
}

// TestServeSIGKILLLosesNothingAcknowledged: each acknowledged state change
// (an approval opened by a decision, an answer with its rule) is in the
// database after the daemon is SIGKILLed right after the response, and a
// pending approval is answered on the restarted daemon.
func TestServeSIGKILLLosesNothingAcknowledged(t *testing.T) {
	bin, dir, dsn, token, person, ws := serveSetup(t)
	call := `{"tool":"Bash","input":{"command":"git push origin main"},"workspace":"` + ws + `","agent":"a"}`

	d := startDaemon(t, bin, dir, dsn)
	var first decided
	if code := d.call(t, token, "POST", "/v1/decide", call, &first); code != 200 || first.Decision != "ask" {
		t.Fatalf("decide: %d %+v", code, first)
	}
	d.kill(t)
	st := openDB(t, dsn)
	a, err := st.Approval(context.Background(), first.ApprovalID)
	if err != nil || a.State != store.Pending {
		t.Fatalf("after SIGKILL the approval is %+v, %v", a, err)
	}
	evs, err := st.Audit(context.Background(), store.AuditFilter{Decision: "ask"})
	if err != nil || len(evs) != 1 || evs[0].Detail["approval_id"] != first.ApprovalID {
		t.Fatalf("after SIGKILL the audit has %+v, %v", evs, err)
	}
	st.Close()

	// Restarted, the daemon still has the approval, and takes its answer.
	d = startDaemon(t, bin, dir, dsn)
	var list struct {
		Approvals []struct{ ID string } `json:"approvals"`
	}
	if code := d.call(t, person, "GET", "/v1/approvals", "", &list); code != 200 || len(list.Approvals) != 1 || list.Approvals[0].ID != first.ApprovalID {
		t.Fatalf("after restart: %d %+v", code, list)
	}
	if code := d.call(t, person, "POST", "/v1/approvals/"+first.ApprovalID, `{"answer":"always"}`, nil); code != 200 {
		t.Fatalf("answer after restart: %d", code)
	}
	d.kill(t)
	st = openDB(t, dsn)
	a, _ = st.Approval(context.Background(), first.ApprovalID)
	rs, _ := st.Rules(context.Background(), ws, a.AnsweredAt)
	if a.State != store.Answered || a.Answer != "always" || len(rs) != 1 || rs[0].Text != "Bash(git push origin main)" {
		t.Fatalf("after SIGKILL the answer is %+v, rules %+v", a, rs)
	}
	st.Close()
	if data, err := os.ReadFile(filepath.Join(ws, ".airlock", "policy.local.toml")); err != nil || !strings.Contains(string(data), "Bash(git push origin main)") {
		t.Fatalf("the local layer after SIGKILL: %s %v", data, err)
	}

	// The decision that used the answer is in the audit log after a kill.
	d = startDaemon(t, bin, dir, dsn)
	var after decided
	if code := d.call(t, token, "POST", "/v1/decide", call, &after); code != 200 || after.Decision != "allow" {
		t.Fatalf("decide after always: %d %+v", code, after)
	}
	d.kill(t)
	st = openDB(t, dsn)
	defer st.Close()
	allowed, _ := st.Audit(context.Background(), store.AuditFilter{Decision: "allow"})
	if len(allowed) != 1 || allowed[0].Type != audit.TypeDecision {
		t.Fatalf("after SIGKILL the allow decision is missing: %+v", allowed)
	}
}

func TestServeStopsOnSIGTERM(t *testing.T) {
	bin, dir, dsn, _, token, _ := serveSetup(t)
	d := startDaemon(t, bin, dir, dsn)
	if code := d.call(t, token, "GET", "/healthz", "", nil); code != 200 {
		t.Fatalf("healthz %d", code)
	}
	// An open event stream must not hold the shutdown up.
	req, _ := http.NewRequest("GET", d.url+"/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("events: %v %v", resp, err)
	}
	defer resp.Body.Close()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-d.done; err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
}

func TestServeUsage(t *testing.T) {
	bin := buildAirlock(t)
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "a.db")
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"serve", "--addr", "0.0.0.0:7420", "--db", db}, 125, "not loopback"},
		{[]string{"serve", "--addr", ":7420", "--db", db}, 125, "every interface"},
		{[]string{"serve", "--addr", "nonsense", "--db", db}, 125, "HOST:PORT"},
		{[]string{"serve", "--bogus"}, 125, "unknown flag --bogus"},
		{[]string{"serve", "extra"}, 125, "unexpected argument"},
		{[]string{"serve", "--approval-ttl", "0s", "--db", db}, 125, "positive"},
		{[]string{"serve", "token"}, 125, "token create"},
		{[]string{"serve", "token", "create", "--db", db}, 125, "--role is required"},
		{[]string{"serve", "token", "create", "--role", "agent", "--db", db}, 125, "--agent NAME"},
		{[]string{"serve", "token", "create", "--role", "person", "--agent", "x", "--db", db}, 125, "acts as no agent"},
		{[]string{"serve", "token", "create", "--role", "root", "--db", db}, 125, "agent, person or operator"},
		{[]string{"serve", "token", "create", "--role", "person", "--workspace", "/nonexistent/x", "--db", db}, 125, "/nonexistent/x"},
		{[]string{"serve", "token", "revoke", "--db", db}, 125, "token's id"},
		{[]string{"serve", "token", "revoke", "tok_nope", "--db", db}, 1, "no token has the id"},
		{[]string{"serve", "workspace", "add", "/nonexistent/x", "--db", db}, 1, "/nonexistent/x"},
		{[]string{"serve", "workspace", "remove", "/nonexistent/x", "--db", db}, 1, "not registered"},
		{[]string{"serve", "workspace"}, 125, "workspace add"},
		{[]string{"serve", "token", "create", "--role", "person", "--db", "mysql://x"}, 1, "not one this airlock knows"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--db", "postgres://u:secret@127.0.0.1:1/db"}, 1, "postgres"},
		{[]string{"serve", "--help"}, 0, ""},
	} {
		cmd := exec.Command(bin, tc.args...)
		cmd.Env = serveEnv(dir)
		code, out, errOut := runCmd(t, cmd)
		if code != tc.code || !strings.Contains(strings.ToLower(errOut), strings.ToLower(tc.msg)) || strings.Contains(errOut+out, "secret") {
			t.Errorf("%v: %d %q %q, want %d and %q", tc.args, code, out, errOut, tc.code, tc.msg)
		}
	}
}
