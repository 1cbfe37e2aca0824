package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/server/store"
)

func TestHealthzAndAuth(t *testing.T) {
	r := newRig(t)
	resp, err := http.Get(r.ts.URL + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	before := r.snapshot()
	wrong := "alk_" + strings.Repeat("A", len(r.token)-4)
	for name, hdr := range map[string]string{
		"no token":    "",
		"wrong token": "Bearer " + wrong,
		"not bearer":  "Basic " + r.token,
		"short token": "Bearer alk_x",
		"two spaces":  "Bearer  " + r.token,
	} {
		t.Log(name)
		r.wantError(401, "unauthorized", "GET", "/v1/approvals", "", "Authorization", hdr)
		r.wantError(401, "unauthorized", "POST", "/v1/decide", r.bash("git push"), "Authorization", hdr)
		r.wantError(401, "unauthorized", "POST", "/v1/approvals/apr_x", `{"answer":"once"}`, "Authorization", hdr)
	}
	r.unchanged(before, "requests with a bad token")
	// The control: the same requests with the rig's token go through.
	r.must(200, "GET", "/v1/approvals", "", nil)
	if d := r.decide(r.bash("git push")); d.Decision != "ask" {
		t.Fatalf("decide with the token: %+v", d)
	}
}

func TestCrossOriginPost(t *testing.T) {
	r := newRig(t)
	before := r.snapshot()
	for _, origin := range []string{"http://evil.example", "null", "http://127.0.0.1:1"} {
		r.wantError(403, "cross_origin", "POST", "/v1/decide", r.bash("git push"), "Origin", origin)
	}
	r.unchanged(before, "cross-origin POSTs")
	// A GET from another origin reads, and a POST from the daemon's own
	// origin (its page) goes through.
	code, _ := r.do("GET", "/v1/approvals", "", "Origin", "http://evil.example")
	if code != 200 {
		t.Fatalf("cross-origin GET: %d", code)
	}
	code, body := r.do("POST", "/v1/decide", r.bash("git push"), "Origin", r.ts.URL)
	if code != 200 {
		t.Fatalf("same-origin POST: %d %s", code, body)
	}
}

func TestDecideBadInput(t *testing.T) {
	r := newRig(t)
	before := r.snapshot()
	ws := r.ws
	for name, body := range map[string]string{
		"malformed":          `{"tool":"Bash",`,
		"not an object":      `["Bash"]`,
		"unknown field":      `{"tool":"Bash","input":{"command":"ls"},"workspace":"` + ws + `","bogus":1}`,
		"trailing data":      `{"tool":"Bash","input":{"command":"ls"},"workspace":"` + ws + `"} {}`,
		"duplicate key":      `{"tool":"Read","tool":"Bash","input":{"command":"ls"},"workspace":"` + ws + `"}`,
		"duplicate in input": `{"tool":"Bash","input":{"command":"ls","command":"rm -rf /"},"workspace":"` + ws + `"}`,
		"input array":        `{"tool":"Bash","input":["ls"],"workspace":"` + ws + `"}`,
		"input string junk":  `{"tool":"Bash","input":"ls","workspace":"` + ws + `"}`,
		"no tool":            `{"input":{"command":"ls"},"workspace":"` + ws + `"}`,
		"no input":           `{"tool":"Bash","workspace":"` + ws + `"}`,
		"relative workspace": `{"tool":"Bash","input":{"command":"ls"},"workspace":"ws"}`,
		"missing workspace":  `{"tool":"Bash","input":{"command":"ls"},"workspace":"` + ws + `/nope"}`,
		"bad wait":           `{"tool":"Bash","input":{"command":"ls"},"workspace":"` + ws + `","wait":"30"}`,
		"wait too long":      `{"tool":"Bash","input":{"command":"ls"},"workspace":"` + ws + `","wait":"11m"}`,
		"wrong type":         `{"tool":7,"input":{"command":"ls"},"workspace":"` + ws + `"}`,
		"lone surrogate":     `{"tool":"Bash","input":{"command":"echo \ud800"},"workspace":"` + ws + `"}`,
		"invalid utf-8":      "{\"tool\":\"Bash\",\"input\":{\"command\":\"echo \xff\"},\"workspace\":\"" + ws + "\"}",
	} {
		t.Log(name)
		r.wantError(400, "bad_request", "POST", "/v1/decide", body)
	}
	r.unchanged(before, "bad decide requests")
	// The control: a good body with the same fields is decided.
	if d := r.decide(`{"tool":"Bash","input":"{\"command\":\"git push\"}","workspace":"` + ws + `"}`); d.Decision != "ask" || d.ApprovalID == "" {
		t.Fatalf("good body: %+v", d)
	}
}

func TestOversizeBody(t *testing.T) {
	r := newRig(t)
	before := r.snapshot()
	big := `{"tool":"Write","input":{"file_path":"` + r.ws + `/f","content":"` + strings.Repeat("x", MaxBody) + `"},"workspace":"` + r.ws + `"}`
	r.wantError(413, "too_large", "POST", "/v1/decide", big)
	r.unchanged(before, "an oversize body")
}

func TestMethodsAndPaths(t *testing.T) {
	r := newRig(t)
	r.wantError(405, "method_not_allowed", "GET", "/v1/decide", "")
	r.wantError(405, "method_not_allowed", "DELETE", "/v1/approvals/apr_x", "")
	r.wantError(404, "not_found", "GET", "/v1/nothing", "")
	r.wantError(404, "not_found", "GET", "/v1/approvals/apr_nope", "")
	r.wantError(400, "bad_request", "GET", "/v1/approvals?x=1", "")
	// The page loads without a token.
	resp, err := http.Get(r.ts.URL + "/")
	if err != nil || resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("page: %v %v", resp, err)
	}
	resp.Body.Close()
}

// open decides cmd and returns the approval it opened.
func (r *rig) open(cmd string) string {
	r.t.Helper()
	d := r.decide(r.bash(cmd))
	if d.Decision != "ask" || d.ApprovalID == "" {
		r.t.Fatalf("%s: %+v, want ask with an approval", cmd, d)
	}
	return d.ApprovalID
}

func TestAskAnswerOnceBindsToTheCall(t *testing.T) {
	r := newRig(t)
	id := r.open("git push origin main && echo ok")
	// The same call again joins the pending approval.
	if again := r.open("git push origin main && echo ok"); again != id {
		t.Fatalf("the same call opened a second approval %s (first %s)", again, id)
	}
	var list struct{ Approvals []Approval }
	r.must(200, "GET", "/v1/approvals", "", &list)
	if len(list.Approvals) != 1 || list.Approvals[0].ID != id {
		t.Fatalf("pending: %+v", list)
	}
	var v View
	if err := json.Unmarshal(list.Approvals[0].View, &v); err != nil {
		t.Fatal(err)
	}
	if v.Command == nil || len(v.Command.Parts) != 2 || strings.Join(v.Command.Parts[0].Argv, " ") != "git push origin main" ||
		len(v.AlwaysRules) != 2 || v.AlwaysRules[0] != "Bash(git push origin main)" || v.Requirements[0].Why == "" {
		t.Fatalf("view: %+v", v)
	}
	// Another agent's identical call is another call.
	other := r.decide(strings.Replace(r.bash("git push origin main && echo ok"), `"agent":"a"`, `"agent":"b"`, 1))
	if other.ApprovalID == id || other.ApprovalID == "" {
		t.Fatalf("another agent's call: %+v", other)
	}
	var a Approval
	r.must(200, "POST", "/v1/approvals/"+id, `{"answer":"once"}`, &a)
	if a.State != store.Answered || a.Decision != "allow" || a.Answer != "once" {
		t.Fatalf("answered: %+v", a)
	}
	// The answer is used by the same call, once.
	d := r.decide(r.bash("git push origin main && echo ok"))
	if d.Decision != "allow" || d.ApprovalID != id || d.Approval != "once" {
		t.Fatalf("after once: %+v", d)
	}
	if next := r.open("git push origin main && echo ok"); next == id {
		t.Fatal("the once answer was used twice")
	}
	// A different call did not get the answer.
	if d := r.decide(r.bash("git push origin main")); d.Decision != "ask" {
		t.Fatalf("another call: %+v", d)
	}
	if _, err := os.Stat(rules.LocalPath(r.ws)); !os.IsNotExist(err) {
		t.Fatalf("a once answer wrote the rules file: %v", err)
	}
	// Every decision is in the audit log, the ask ones as ask.
	var au struct{ Events []map[string]any }
	r.must(200, "GET", "/v1/audit?decision=ask", "", &au)
	if len(au.Events) < 3 {
		t.Fatalf("audit asks: %d", len(au.Events))
	}
	r.must(200, "GET", "/v1/audit?decision=allow&tool=Bash", "", &au)
	if len(au.Events) != 1 || au.Events[0]["detail"].(map[string]any)["approval"] != "once" {
		t.Fatalf("audit allow: %+v", au.Events)
	}
}

func TestAnswerErrorsChangeNothing(t *testing.T) {
	r := newRig(t)
	id := r.open("git push")
	before := r.snapshot()
	r.wantError(404, "not_found", "POST", "/v1/approvals/apr_unknown", `{"answer":"once"}`)
	r.wantError(400, "bad_request", "POST", "/v1/approvals/"+id, `{"answer":"yes"}`)
	r.wantError(400, "bad_request", "POST", "/v1/approvals/"+id, `{"answer":"once","for":"10m"}`)
	r.wantError(400, "bad_request", "POST", "/v1/approvals/"+id, `{"answer":"always","for":"ten minutes"}`)
	r.wantError(400, "bad_request", "POST", "/v1/approvals/"+id, `{"answer":"always","for":"-1m"}`)
	r.wantError(400, "bad_request", "POST", "/v1/approvals/"+id, `{"answer":"always"`)
	r.wantError(400, "bad_request", "POST", "/v1/approvals/"+id, `{"answer":"always","by":"me"}`)
	r.unchanged(before, "bad answers")
	r.must(200, "POST", "/v1/approvals/"+id, `{"answer":"deny"}`, nil)
	after := r.snapshot()
	r.wantError(409, "already_answered", "POST", "/v1/approvals/"+id, `{"answer":"always"}`)
	r.unchanged(after, "a second answer")
	var a Approval
	r.must(200, "GET", "/v1/approvals/"+id, "", &a)
	if a.Answer != "deny" || a.Decision != "deny" {
		t.Fatalf("the first answer was replaced: %+v", a)
	}
	if d := r.decide(r.bash("git push")); d.Decision != "deny" || d.ApprovalID != id {
		t.Fatalf("after deny: %+v", d)
	}
}

func TestExpiry(t *testing.T) {
	r := newRig(t)
	id := r.open("git push")
	r.clock.Add(DefaultApprovalTTL + time.Second)
	r.wantError(410, "expired", "POST", "/v1/approvals/"+id, `{"answer":"always"}`)
	after := r.snapshot()
	if after.File != "" || len(after.Rules) != 0 || len(after.Pending) != 0 {
		t.Fatalf("a late always answer saved something: %+v", after)
	}
	var a Approval
	r.must(200, "GET", "/v1/approvals/"+id, "", &a)
	if a.State != store.Expired || a.Decision != "deny" {
		t.Fatalf("expired approval: %+v", a)
	}
	// The expiry is the answer the call gets, once.
	if d := r.decide(r.bash("git push")); d.Decision != "deny" || d.ApprovalID != id {
		t.Fatalf("after expiry: %+v", d)
	}
	if next := r.open("git push"); next == id {
		t.Fatal("the expiry was used twice")
	}
}

func TestAlwaysWritesTheRule(t *testing.T) {
	r := newRig(t)
	id := r.open("git push origin main")
	var a Approval
	r.must(200, "POST", "/v1/approvals/"+id, `{"answer":"always","for":"1h"}`, &a)
	if a.For != "1h0m0s" || a.Decision != "allow" {
		t.Fatalf("answer: %+v", a)
	}
	data, err := os.ReadFile(rules.LocalPath(r.ws))
	if err != nil || !strings.Contains(string(data), `match = "Bash(git push origin main)"`) || !strings.Contains(string(data), "expires") {
		t.Fatalf("rules file: %s %v", data, err)
	}
	saved, _ := r.st.Rules(context.Background(), r.ws, r.clock.Now())
	if len(saved) != 1 || saved[0].Text != "Bash(git push origin main)" || saved[0].Approval != id {
		t.Fatalf("saved rules: %+v", saved)
	}
	// The file's rule decides (with the store's rule); the answer itself
	// is also used once.
	if err := os.Remove(rules.LocalPath(r.ws)); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if d := r.decide(r.bash("git push origin main")); d.Decision != "allow" {
			t.Fatalf("after always, with only the database's rule: %+v", d)
		}
	}
	id2 := r.open("git push --force")
	r.must(200, "POST", "/v1/approvals/"+id2, `{"answer":"always_deny"}`, nil)
	r.must(200, "GET", "/v1/approvals/"+id2, "", nil)
	for range 2 {
		if d := r.decide(r.bash("git push --force")); d.Decision != "deny" {
			t.Fatalf("after always_deny: %+v", d)
		}
	}
	data, _ = os.ReadFile(rules.LocalPath(r.ws))
	if !strings.Contains(string(data), `effect = "deny"`) {
		t.Fatalf("rules file after always_deny: %s", data)
	}
}

func TestDecideWaitsForTheAnswer(t *testing.T) {
	r := newRig(t)
	got := make(chan decideResponse, 1)
	go func() {
		var d decideResponse
		code, body := r.do("POST", "/v1/decide", r.bash("make deploy", "wait", "5m"))
		if code == 200 {
			json.Unmarshal(body, &d)
		}
		got <- d
	}()
	id := waitPending(t, r)
	r.must(200, "POST", "/v1/approvals/"+id, `{"answer":"once"}`, nil)
	d := <-got
	if d.Decision != "allow" || d.ApprovalID != id {
		t.Fatalf("waiting decide: %+v", d)
	}
	// The waiting client used the answer.
	if again := r.open("make deploy"); again == id {
		t.Fatal("the answer was used again")
	}
}

// Two clients waiting on one call share its approval; a "once" answer is
// used by one of them, and the other goes on waiting on an approval of its
// own, which a second answer settles.
func TestTwoWaitersOfOneCall(t *testing.T) {
	r := newRig(t)
	got := make(chan decideResponse, 2)
	for range 2 {
		go func() {
			var d decideResponse
			code, body := r.do("POST", "/v1/decide", r.bash("make deploy", "wait", "5m"))
			if code == 200 {
				json.Unmarshal(body, &d)
			}
			got <- d
		}()
	}
	first := waitPending(t, r)
	// Both requests are in: only then can the one answer reach both.
	for deadline := time.Now().Add(30 * time.Second); ; {
		if time.Now().After(deadline) {
			t.Fatal("the second request never waited")
		}
		var list struct{ Approvals []Approval }
		r.must(200, "GET", "/v1/approvals", "", &list)
		if len(list.Approvals) != 1 {
			t.Fatalf("two waiters of one call: %d approvals pending, want 1", len(list.Approvals))
		}
		if r.srv.waiting.Load() == 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	r.must(200, "POST", "/v1/approvals/"+first, `{"answer":"once"}`, nil)
	d := <-got
	if d.Decision != "allow" || d.ApprovalID != first {
		t.Fatalf("first waiter: %+v, want allow by %s", d, first)
	}
	second := waitPending(t, r)
	if second == first {
		t.Fatal("the second waiter waits on the answered approval")
	}
	r.must(200, "POST", "/v1/approvals/"+second, `{"answer":"deny"}`, nil)
	if d := <-got; d.Decision != "deny" || d.ApprovalID != second {
		t.Fatalf("second waiter: %+v, want deny by %s", d, second)
	}
}

// waitPending waits until one approval is pending and returns it.
func waitPending(t *testing.T, r *rig) string {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		var list struct{ Approvals []Approval }
		r.must(200, "GET", "/v1/approvals", "", &list)
		if len(list.Approvals) == 1 {
			return list.Approvals[0].ID
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no approval became pending in 30s")
	return ""
}

func TestLongPollSeesTheAnswer(t *testing.T) {
	r := newRig(t)
	id := r.open("git push")
	r.wantError(400, "bad_request", "GET", "/v1/approvals/"+id+"?wait=forever", "")
	var a Approval
	r.must(200, "GET", "/v1/approvals/"+id+"?wait=0s", "", &a)
	if a.State != store.Pending {
		t.Fatalf("no wait: %+v", a)
	}
	got := make(chan Approval, 1)
	go func() {
		var a Approval
		code, body := r.do("GET", "/v1/approvals/"+id+"?wait=5m", "")
		if code == 200 {
			json.Unmarshal(body, &a)
		}
		got <- a
	}()
	// Answer straight in the Store, as another replica would: only the
	// poll can see it.
	if _, err := r.st.AnswerApproval(context.Background(), id, "deny", 0, "", r.clock.Now(), nil); err != nil {
		t.Fatal(err)
	}
	if a := <-got; a.State != store.Answered || a.Decision != "deny" {
		t.Fatalf("long poll: %+v", a)
	}
}

func TestConcurrentAnswersOneWins(t *testing.T) {
	r := newRig(t)
	id := r.open("git push origin main")
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answer := []string{"once", "always", "deny", "always_deny"}[i%4]
			codes[i], _ = r.do("POST", "/v1/approvals/"+id, fmt.Sprintf(`{"answer":%q}`, answer))
		}()
	}
	wg.Wait()
	ok := 0
	for _, c := range codes {
		switch c {
		case 200:
			ok++
		case 409:
		default:
			t.Fatalf("answer status %d", c)
		}
	}
	if ok != 1 {
		t.Fatalf("%d answers got 200: %v", ok, codes)
	}
	// Only the winner's rules (if any) were written.
	var a Approval
	r.must(200, "GET", "/v1/approvals/"+id, "", &a)
	saved, _ := r.st.Rules(context.Background(), r.ws, r.clock.Now())
	data, _ := os.ReadFile(rules.LocalPath(r.ws))
	switch a.Answer {
	case "once", "deny":
		if len(saved) != 0 || len(data) != 0 {
			t.Fatalf("answer %s saved rules: %v %s", a.Answer, saved, data)
		}
	case "always", "always_deny":
		if len(saved) != 1 || strings.Count(string(data), "[[rule]]") != 1 {
			t.Fatalf("answer %s saved: %v %s", a.Answer, saved, data)
		}
	}
}

func TestEvents(t *testing.T) {
	r := newRig(t)
	r.wantError(400, "bad_request", "GET", "/v1/events", "", "Last-Event-ID", "x")
	old := r.open("echo before")
	s := r.events("")
	id := r.open("git push")
	e := s.next(t)
	if e.Event != "opened" || e.Data.ID != id || e.ID == "" {
		t.Fatalf("first event: %+v (the one before the stream was %s)", e, old)
	}
	r.must(200, "POST", "/v1/approvals/"+id, `{"answer":"once"}`, nil)
	e2 := s.next(t)
	if e2.Event != "answered" || e2.Data.ID != id || e2.Data.Answer != "once" {
		t.Fatalf("second event: %+v", e2)
	}
	// Resuming after the opened event replays the answer only.
	s2 := r.events(e.ID)
	if e3 := s2.next(t); e3.Event != "answered" || e3.ID != e2.ID {
		t.Fatalf("resumed: %+v", e3)
	}
	r.clock.Add(DefaultApprovalTTL + time.Second)
	r.srv.expire(context.Background())
	if e4 := s.next(t); e4.Event != "expired" || e4.Data.ID != old || e4.Data.Decision != "deny" {
		t.Fatalf("expiry event: %+v", e4)
	}
}

func TestAuditQuery(t *testing.T) {
	r := newRig(t)
	r.open("git push")
	since := r.clock.Now().Add(-time.Minute).Format(time.RFC3339)
	var au struct{ Events []map[string]any }
	r.must(200, "GET", "/v1/audit?since="+since+"&tool=Bash&decision=ask&limit=5", "", &au)
	if len(au.Events) != 1 || au.Events[0]["decision"] != "ask" {
		t.Fatalf("audit: %+v", au)
	}
	r.must(200, "GET", "/v1/audit?tool=Read", "", &au)
	if len(au.Events) != 0 {
		t.Fatalf("tool=Read: %+v", au)
	}
	for _, q := range []string{"since=yesterday", "decision=maybe", "limit=0", "limit=x", "limit=10001", "tool=", "color=red", "tool=a&tool=b"} {
		r.wantError(400, "bad_request", "GET", "/v1/audit?"+q, "")
	}
}

func TestLoopbackHosts(t *testing.T) {
	r := newRig(t, func(c *Config) { c.LoopbackHosts = true })
	before := r.snapshot()
	// A page on a name rebound to 127.0.0.1 is "same-origin" with itself.
	r.wantError(403, "cross_origin", "POST", "/v1/decide", r.bash("git push"), "Host", "evil.example:7420", "Origin", "http://evil.example:7420")
	r.wantError(403, "cross_origin", "GET", "/v1/approvals", "", "Host", "evil.example")
	r.unchanged(before, "a request for another host")
	for _, h := range []string{"localhost:7420", "127.0.0.1", "[::1]:7420"} {
		if code, body := r.do("GET", "/v1/approvals", "", "Host", h); code != 200 {
			t.Fatalf("Host %s: %d %s", h, code, body)
		}
	}
}

func TestLastSeq(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	for n := 0; n <= 37; n++ {
		got, err := r.srv.lastSeq(ctx)
		if err != nil {
			t.Fatal(err)
		}
		evs, _ := r.st.Events(ctx, 0, 0)
		want := int64(0)
		if len(evs) > 0 {
			want = evs[len(evs)-1].Seq
		}
		if got != want {
			t.Fatalf("with %d events: lastSeq %d, want %d", len(evs), got, want)
		}
		now := r.clock.Now()
		if err := r.st.OpenApproval(ctx, store.Approval{ID: fmt.Sprint("apr_", n), CallHash: fmt.Sprint("h", n), Tool: "Bash", Input: []byte(`{}`),
			CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestBrokenPolicyDenies(t *testing.T) {
	r := newRig(t)
	if err := os.MkdirAll(r.ws+"/.airlock", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.ws+"/.airlock/policy.toml", []byte("[[rule]]\neffect = \"allow\"\nmatch = \"Bash(ls\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := r.decide(r.bash("ls"))
	if d.Decision != "deny" || !strings.Contains(d.Reason, "do not load") {
		t.Fatalf("broken policy: %+v", d)
	}
	var au struct{ Events []map[string]any }
	r.must(200, "GET", "/v1/audit?decision=deny", "", &au)
	if len(au.Events) != 1 {
		t.Fatalf("the denial is not in the audit log: %+v", au)
	}
}

// A decide that waits for a person is in the audit log from the moment
// its approval opens, not only when it returns.
func TestWaitingAskIsAudited(t *testing.T) {
	r := newRig(t)
	done := make(chan decideResponse, 1)
	go func() {
		done <- r.decide(`{"tool":"Bash","input":{"command":"git push origin main"},"workspace":"` + r.ws + `","wait":"1m"}`)
	}()
	var au struct{ Events []map[string]any }
	var id string
	for i := 0; i < 500 && id == ""; i++ {
		r.must(200, "GET", "/v1/audit?tool=Bash", "", &au)
		for _, e := range au.Events {
			if d, _ := e["detail"].(map[string]any); d != nil && d["approval"] == "opened" && e["decision"] == "ask" {
				id, _ = d["approval_id"].(string)
			}
		}
		if id == "" {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if id == "" {
		t.Fatalf("no audit event for the waiting approval: %+v", au.Events)
	}
	select {
	case d := <-done:
		t.Fatalf("the decide returned before an answer: %+v", d)
	default:
	}
	r.must(200, "POST", "/v1/approvals/"+id, `{"answer":"once"}`, nil)
	if d := <-done; d.Decision != "allow" || d.ApprovalID != id {
		t.Fatalf("decide after the answer: %+v", d)
	}
	r.must(200, "GET", "/v1/audit?tool=Bash", "", &au)
	if n := len(au.Events); n != 2 || au.Events[1]["decision"] != "allow" {
		t.Fatalf("audit after the answer: %+v", au.Events)
	}
}
