package server

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlockhq/airlock/provider"
	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/server/store"
)

// TestAgentCannotApproveItself: the token an agent decides with cannot
// answer its own approval, read the audit or see another agent's
// approvals; the person's token can (positive control).
func TestAgentCannotApproveItself(t *testing.T) {
	r := newRig(t)
	agent := r.agentToken("a")
	d := r.decide(r.bash("git push origin main"))
	if d.Decision != "ask" || d.ApprovalID == "" {
		t.Fatalf("decide: %+v", d)
	}
	before := r.snapshot()
	for _, answer := range []string{`{"answer":"always"}`, `{"answer":"once"}`} {
		code, body := r.doAs(agent, "POST", "/v1/approvals/"+d.ApprovalID, answer)
		if code != 403 || !strings.Contains(string(body), `"forbidden"`) {
			t.Fatalf("the agent answered its own approval: %d %s", code, body)
		}
	}
	r.unchanged(before, "an agent's answer")
	if _, err := os.Stat(rules.LocalPath(r.ws)); !os.IsNotExist(err) {
		t.Fatalf("a rule file appeared after the agent's answer: %v", err)
	}
	if d := r.decide(r.bash("git push origin main")); d.Decision != "ask" {
		t.Fatalf("after the agent's answer the call is %+v, want still ask", d)
	}
	if code, body := r.doAs(agent, "GET", "/v1/audit", ""); code != 403 {
		t.Fatalf("the agent read the audit: %d %.200s", code, body)
	}
	// Another agent's approval is out of a's sight.
	other := r.decide(r.bash("make deploy", "agent", "b"))
	var list struct{ Approvals []Approval }
	code, body := r.doAs(agent, "GET", "/v1/approvals", "")
	if code != 200 || json.Unmarshal(body, &list) != nil {
		t.Fatalf("list: %d %s", code, body)
	}
	if len(list.Approvals) != 1 || list.Approvals[0].ID != d.ApprovalID {
		t.Fatalf("agent a lists %+v, want only its own %s", list.Approvals, d.ApprovalID)
	}
	if code, _ := r.doAs(agent, "GET", "/v1/approvals/"+other.ApprovalID, ""); code != 404 {
		t.Fatalf("agent a reads agent b's approval: %d", code)
	}
	// Positive control: the person sees both and answers.
	r.must(200, "GET", "/v1/approvals", "", &list)
	if len(list.Approvals) != 2 {
		t.Fatalf("the person lists %d approvals, want 2", len(list.Approvals))
	}
	r.must(200, "GET", "/v1/audit", "", nil)
	r.must(200, "POST", "/v1/approvals/"+d.ApprovalID, `{"answer":"once"}`, nil)
	if d := r.decide(r.bash("git push origin main")); d.Decision != "allow" {
		t.Fatalf("after the person's answer: %+v", d)
	}
	// A person is no agent: it does not decide.
	if code, _ := r.doAs(r.token, "POST", "/v1/decide", r.bash("ls")); code != 403 {
		t.Fatalf("a person's token decided: %d", code)
	}
}

// TestAgentEventsOnlyItsOwn: an agent's event stream carries its own
// approvals and no other agent's.
func TestAgentEventsOnlyItsOwn(t *testing.T) {
	r := newRig(t)
	tok := r.agentToken("a")
	saved := r.token
	r.token = tok // events() streams with r.token
	ev := r.events("")
	r.token = saved
	r.decide(r.bash("make deploy", "agent", "b"))
	mine := r.decide(r.bash("make test"))
	e := ev.next(t)
	if e.Data.ID != mine.ApprovalID || e.Data.Agent != "a" {
		t.Fatalf("agent a's first event is %+v, want its own %s (agent b's was first)", e.Data, mine.ApprovalID)
	}
}

// TestBodyCannotNameAnotherIdentity: with agent a's token, a body naming
// the deployer neither decides nor runs code as the deployer.
func TestBodyCannotNameAnotherIdentity(t *testing.T) {
	cat, err := provider.ParseCatalog("sandboxes.toml", []byte(`
[sandbox.deploy]
provider = "local"

[agent.deployer]
sandboxes = ["deploy"]
`), provider.LocalDriver())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	r := newRig(t, withCatalog(cat))
	a := r.agentToken("a")
	before := r.snapshot()
	body := r.bash("git push origin main", "agent", "deployer")
	if code, out := r.doAs(a, "POST", "/v1/decide", body); code != 403 || !strings.Contains(string(out), "identity_mismatch") {
		t.Fatalf("decide as another agent: %d %s", code, out)
	}
	r.unchanged(before, "a decide naming another agent")
	mark := filepath.Join(t.TempDir(), "ran")
	run := `{"sandbox":"deploy","agent":"deployer","argv":["touch",` + jsonString(mark) + `]}`
	if code, out := r.doAs(a, "POST", "/v1/exec", run); code != 403 || !strings.Contains(string(out), "identity_mismatch") {
		t.Fatalf("exec as another agent: %d %s", code, out)
	}
	if _, err := os.Stat(mark); !os.IsNotExist(err) {
		t.Fatalf("agent a's token ran code in the deployer's sandbox: %v", err)
	}
	// Without "agent" the token's own agent runs: a has no sandbox.
	if code, _ := r.doAs(a, "POST", "/v1/exec", `{"sandbox":"deploy","argv":["touch",`+jsonString(mark)+`]}`); code != 403 {
		t.Fatalf("agent a ran in the deployer's sandbox: %d", code)
	}
	// Positive control: the deployer's own token runs there.
	var res provider.Result
	r.must(200, "POST", "/v1/exec", `{"sandbox":"deploy","agent":"deployer","argv":["echo","ran"]}`, &res)
	if res.Status != provider.StatusSucceeded || res.Stdout != "ran\n" {
		t.Fatalf("the deployer's run: %+v", res)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestUnregisteredWorkspaceRefused: a workspace no operator registered
// (nor the token names) is refused before anything is read from it; the
// approval view then cannot disclose another project's files.
func TestUnregisteredWorkspaceRefused(t *testing.T) {
	r := newRig(t)
	other := filepath.Join(t.TempDir(), "project-b")
	if err := os.MkdirAll(filepath.Join(other, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	secret := "[remote \"origin\"]\n\turl = https://user:SECRET-PAT@example.com/b.git\n"
	if err := os.WriteFile(filepath.Join(other, ".git", "config"), []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(ws string) string {
		b, _ := json.Marshal(map[string]any{"tool": "Write", "workspace": ws,
			"input": map[string]any{"file_path": filepath.Join(ws, ".git", "config"), "content": ""}})
		return string(b)
	}
	before := r.snapshot()
	// The rig's agent token is scoped to r.ws.
	if code, out := r.do("POST", "/v1/decide", write(other)); code != 403 || strings.Contains(string(out), "SECRET") {
		t.Fatalf("decide in a workspace outside the token's: %d %s", code, out)
	}
	// An unscoped agent token: only registered workspaces.
	free, _, err := CreateToken(context.Background(), r.st, TokenSpec{Role: store.RoleAgent, Agent: "a"}, r.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if code, out := r.doAs(free, "POST", "/v1/decide", write(other)); code != 403 || !strings.Contains(string(out), "workspace_not_registered") {
		t.Fatalf("decide in an unregistered workspace: %d %s", code, out)
	}
	r.unchanged(before, "a decide in an unregistered workspace")
	var list struct{ Approvals []Approval }
	r.must(200, "GET", "/v1/approvals", "", &list)
	if len(list.Approvals) != 0 {
		t.Fatalf("approvals opened: %+v", list.Approvals)
	}
	// Positive control: registered, it decides (and its view is the
	// person's to see; the agent's copy has no diff).
	if _, err := RegisterWorkspace(context.Background(), r.st, other, store.Workspace{AddedAt: r.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	var d decideResponse
	code, out := r.doAs(free, "POST", "/v1/decide", write(other))
	if code != 200 || json.Unmarshal(out, &d) != nil || d.Decision != "ask" {
		t.Fatalf("decide in a registered workspace: %d %s", code, out)
	}
	code, out = r.doAs(free, "GET", "/v1/approvals/"+d.ApprovalID, "")
	if code != 200 || strings.Contains(string(out), "SECRET") {
		t.Fatalf("the agent's view of its approval: %d %s", code, out)
	}
	// Control: the person, who answers, sees what the write would remove.
	code, out = r.do("GET", "/v1/approvals/"+d.ApprovalID, "")
	if code != 200 || !strings.Contains(string(out), "SECRET-PAT") {
		t.Fatalf("the person's view lacks the diff: %d %s", code, out)
	}
}

// TestAlwaysNeverLeavesWorkspace: with WORKSPACE/.airlock a symlink to
// project B's, an "always" answer on a card of workspace A writes no rule
// into B (it applies to A through the database).
func TestAlwaysNeverLeavesWorkspace(t *testing.T) {
	r := newRig(t)
	other := t.TempDir()
	if err := os.Mkdir(filepath.Join(other, ".airlock"), 0o700); err != nil {
		t.Fatal(err)
	}
	// The card opens; then the workspace's .airlock becomes a symlink
	// into B before the person answers.
	d := r.decide(r.bash("git push origin main"))
	if err := os.Symlink(filepath.Join(other, ".airlock"), filepath.Join(r.ws, ".airlock")); err != nil {
		t.Fatal(err)
	}
	code, out := r.do("POST", "/v1/approvals/"+d.ApprovalID, `{"answer":"always"}`)
	if _, err := os.Stat(filepath.Join(other, ".airlock", "policy.local.toml")); !os.IsNotExist(err) {
		t.Fatalf("the rule landed in project B (answer: %d %s)", code, out)
	}
	if code != 500 || !strings.Contains(string(out), "symlink") {
		t.Fatalf("the answer: %d %s, want the write refused, naming the symlink", code, out)
	}
	// While .airlock is a symlink the workspace's policy does not load
	// (it would be B's): nothing is allowed.
	if got := r.decide(r.bash("git push origin main")); got.Decision != "deny" || !strings.Contains(got.Reason, "symlink") {
		t.Fatalf("with a symlinked .airlock: %+v, want deny naming the symlink", got)
	}
	// Control: a real directory; the answer holds for A through the
	// database, and a new answer's rule is written to A's own file.
	os.Remove(filepath.Join(r.ws, ".airlock"))
	if got := r.decide(r.bash("git push origin main")); got.Decision != "allow" {
		t.Fatalf("after always: %+v", got)
	}
	d = r.decide(r.bash("git push origin dev"))
	r.must(200, "POST", "/v1/approvals/"+d.ApprovalID, `{"answer":"always"}`, nil)
	if data, err := os.ReadFile(rules.LocalPath(r.ws)); err != nil || !strings.Contains(string(data), "git push origin dev") {
		t.Fatalf("the workspace's own rules: %q %v", data, err)
	}
}

// TestWorkspaceSpelling: a symlink to a registered workspace decides as
// the workspace itself (one canonical spelling); the approval names it.
func TestWorkspaceSpelling(t *testing.T) {
	r := newRig(t)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(r.ws, link); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"tool": "Bash", "workspace": link + "/", "input": map[string]any{"command": "make x"}})
	d := r.decide(string(b))
	a, err := r.st.Approval(context.Background(), d.ApprovalID)
	if err != nil || a.Workspace != r.ws {
		t.Fatalf("approval workspace %q, %v; want %q", a.Workspace, err, r.ws)
	}
}

// TestAnswerBindsToOneExecution: an answer "once" given to a call with
// execution ex-1 is not taken by another token holder repeating the call
// with its own execution id.
func TestAnswerBindsToOneExecution(t *testing.T) {
	r := newRig(t)
	first := r.decide(r.bash("git push origin main", "execution_id", "ex-1"))
	if first.Decision != "ask" {
		t.Fatalf("first: %+v", first)
	}
	r.must(200, "POST", "/v1/approvals/"+first.ApprovalID, `{"answer":"once"}`, nil)
	// A second token of the same agent (say, a copy the agent's sandbox
	// leaked), with its own execution id.
	thief, _, err := CreateToken(context.Background(), r.st, TokenSpec{Role: store.RoleAgent, Agent: "a", Workspaces: []string{r.ws}}, r.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	var d decideResponse
	code, out := r.doAs(thief, "POST", "/v1/decide", r.bash("git push origin main", "execution_id", "ex-2"))
	if code != 200 || json.Unmarshal(out, &d) != nil {
		t.Fatalf("second: %d %s", code, out)
	}
	if d.Decision != "ask" || d.Grant != "" || d.ApprovalID == first.ApprovalID {
		t.Fatalf("another execution took the answer: %+v", d)
	}
	// Positive control: the execution it was given for gets it, once.
	got := r.decide(r.bash("git push origin main", "execution_id", "ex-1"))
	if got.Decision != "allow" || got.Grant == "" || got.ApprovalID != first.ApprovalID {
		t.Fatalf("the answered execution: %+v", got)
	}
	if _, err := r.srv.Issuer().Redeem(grantToken(got.Grant), grantBinding(r, "git push origin main", "ex-1")); err != nil {
		t.Fatalf("redeem for ex-1: %v", err)
	}
}

// TestRevokedTokenRefusedEverywhere: a token revoked in the database is
// refused at once by a replica that had just accepted it; an expired one
// likewise.
func TestRevokedTokenRefusedEverywhere(t *testing.T) {
	r := newRig(t)
	other, err := New(Config{Store: r.st, Policy: r.srv.cfg.Policy, Now: r.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ts2 := httptest.NewServer(other)
	defer ts2.Close()
	tok, rec, err := CreateToken(context.Background(), r.st, TokenSpec{Role: store.RolePerson}, r.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	get := func(url string) int {
		saved := r.ts.URL
		r.ts.URL = url
		defer func() { r.ts.URL = saved }()
		code, _ := r.doAs(tok, "GET", "/v1/whoami", "")
		return code
	}
	if a, b := get(r.ts.URL), get(ts2.URL); a != 200 || b != 200 {
		t.Fatalf("before revocation: %d %d", a, b)
	}
	if err := r.st.RevokeToken(context.Background(), rec.ID, r.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if a, b := get(r.ts.URL), get(ts2.URL); a != 401 || b != 401 {
		t.Fatalf("after revocation: %d %d, want 401 on both replicas", a, b)
	}
	short, _, err := CreateToken(context.Background(), r.st, TokenSpec{Role: store.RolePerson, TTL: time.Hour}, r.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	tok = short
	if code := get(ts2.URL); code != 200 {
		t.Fatalf("a fresh token with an expiry: %d", code)
	}
	r.clock.Add(time.Hour)
	if code := get(ts2.URL); code != 401 {
		t.Fatalf("an expired token: %d, want 401", code)
	}
}

// TestWhoami: the API says which role a token has.
func TestWhoami(t *testing.T) {
	r := newRig(t)
	var who struct {
		Role       string
		Agent      string
		Workspaces []string
		Answers    bool
	}
	code, out := r.doAs(r.agentToken("a"), "GET", "/v1/whoami", "")
	if code != 200 || json.Unmarshal(out, &who) != nil || who.Role != "agent" || who.Agent != "a" || who.Answers || len(who.Workspaces) != 1 || who.Workspaces[0] != r.ws {
		t.Fatalf("agent whoami: %d %s", code, out)
	}
	who.Agent = ""
	r.must(200, "GET", "/v1/whoami", "", &who)
	if who.Role != "person" || !who.Answers || who.Agent != "" {
		t.Fatalf("person whoami: %+v", who)
	}
}

// TestAlwaysRuleNoBroaderThanCard: "always" on the card of
// "git -C /repo/a push origin main" allows that push again and not the
// same push in another repository.
func TestAlwaysRuleNoBroaderThanCard(t *testing.T) {
	r := newRig(t)
	d := r.decide(r.bash("git -C /repo/a push origin main"))
	var a Approval
	r.must(200, "GET", "/v1/approvals/"+d.ApprovalID, "", &a)
	var v View
	if err := json.Unmarshal(a.View, &v); err != nil || len(v.AlwaysRules) != 1 || v.AlwaysRules[0] != "Bash(git -C /repo/a push origin main)" {
		t.Fatalf("the card's always rules: %+v %v", v.AlwaysRules, err)
	}
	r.must(200, "POST", "/v1/approvals/"+d.ApprovalID, `{"answer":"always"}`, nil)
	if got := r.decide(r.bash("git -C /repo/a push origin main")); got.Decision != "allow" {
		t.Fatalf("the card's own call after always: %+v", got)
	}
	for _, cmd := range []string{"git -C /repo/b push origin main", "git push origin main", "git --git-dir=/repo/b/.git push origin main"} {
		if got := r.decide(r.bash(cmd)); got.Decision != "ask" {
			t.Fatalf("%q after always for /repo/a: %+v, want ask", cmd, got)
		}
	}
}

// TestOperatorManagesTokens: an operator lists tokens (never their text)
// and revokes one, which is refused at once; a person or an agent may do
// neither.
func TestOperatorManagesTokens(t *testing.T) {
	r := newRig(t)
	op, _, err := CreateToken(context.Background(), r.st, TokenSpec{Role: store.RoleOperator, Name: "ops"}, r.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	agent := r.agentToken("a")
	for _, tok := range []string{r.token, agent} {
		if code, _ := r.doAs(tok, "GET", "/v1/tokens", ""); code != 403 {
			t.Fatalf("a non-operator listed tokens: %d", code)
		}
	}
	var list struct {
		Tokens []struct{ ID, Role, Agent string }
	}
	code, out := r.doAs(op, "GET", "/v1/tokens", "")
	if code != 200 || json.Unmarshal(out, &list) != nil || len(list.Tokens) != 3 || strings.Contains(string(out), "alk_") {
		t.Fatalf("list: %d %s", code, out)
	}
	var agentID string
	for _, tk := range list.Tokens {
		if tk.Role == "agent" {
			agentID = tk.ID
		}
	}
	if code, _ := r.doAs(r.token, "POST", "/v1/tokens/"+agentID+"/revoke", "{}"); code != 403 {
		t.Fatalf("a person revoked a token: %d", code)
	}
	if code, _ := r.doAs(agent, "GET", "/v1/whoami", ""); code != 200 {
		t.Fatalf("the agent before revocation: %d", code)
	}
	if code, out := r.doAs(op, "POST", "/v1/tokens/"+agentID+"/revoke", "{}"); code != 200 {
		t.Fatalf("revoke: %d %s", code, out)
	}
	if code, _ := r.doAs(agent, "POST", "/v1/decide", r.bash("ls")); code != 401 {
		t.Fatalf("a revoked agent token decided: %d", code)
	}
	if code, _ := r.doAs(op, "POST", "/v1/tokens/tok_nope/revoke", "{}"); code != 404 {
		t.Fatalf("revoking an unknown token: %d", code)
	}
}
