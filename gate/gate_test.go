package gate

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlockhq/airlock/audit"
	"github.com/airlockhq/airlock/grant"
	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/tool"
)

// funcApprover answers with a fixed function; it records what it was
// asked. (Package approval has the real approvers; it imports gate.)
type funcApprover struct {
	answer Answer
	err    error
	mu     sync.Mutex
	asked  []Request
}

func (f *funcApprover) Approve(_ context.Context, req Request) (Answer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, req)
	return f.answer, f.err
}

func TestApproveAlwaysSavesExactRules(t *testing.T) {
	dirs := newTestDirs(t)
	ws := dirs.ws
	local := rules.LocalPath(ws)
	ap := &funcApprover{answer: Answer{Verdict: ApproveAlways}}
	e := &Evaluator{Profile: dirs.profile(t, nil), Approver: ap, Remember: &rules.Writer{Path: local}}
	d, err := e.Decide(context.Background(), dirs.bash("cd sub && git push origin main | tee $LOG"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Effect != rules.Allow || d.Approval != "always" {
		t.Fatalf("decision %+v", d)
	}
	set, err := rules.Load(rules.Sources{Workspace: ws, Managed: "-", User: "-", NoClaude: true})
	if err != nil {
		t.Fatal(err)
	}
	var saved []string
	for _, r := range set.Rules() {
		saved = append(saved, r.Match)
	}
	want := "Bash(git push origin main)" // cd needs no rule; tee $LOG is dynamic: approved once only
	if strings.Join(saved, ",") != want {
		t.Errorf("saved %v, want %s", saved, want)
	}
	// The same call asks again only about what could not be saved.
	ap.answer = Answer{Verdict: DenyOnce}
	d, _ = e.Decide(context.Background(), dirs.bash("cd sub && git push origin main"))
	if d.Effect != rules.Allow {
		t.Errorf("after always: %s (%s)", d.Effect, d.Reason)
	}
	d, _ = e.Decide(context.Background(), dirs.bash("git push origin main --force"))
	if d.Effect != rules.Deny || len(ap.asked) != 2 {
		t.Errorf("a broader command must ask again: %s, asked %d times", d.Effect, len(ap.asked))
	}
}

func TestApproveForExpires(t *testing.T) {
	dirs := newTestDirs(t)
	ws := dirs.ws
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ap := &funcApprover{answer: Answer{Verdict: ApproveFor, For: time.Hour}}
	e := &Evaluator{Approver: ap, Remember: &rules.Writer{Path: rules.LocalPath(ws)}, Now: func() time.Time { return now }}
	if d, _ := e.Decide(context.Background(), dirs.bash("make")); d.Effect != rules.Allow || d.Approval != "for 1h0m0s" {
		t.Fatalf("%+v", d)
	}
	data, _ := os.ReadFile(rules.LocalPath(ws))
	if !strings.Contains(string(data), "expires = 2026-01-01T01:00:00Z") {
		t.Errorf("no expiry in saved rule:\n%s", data)
	}
	ap.answer = Answer{Verdict: DenyOnce}
	now = now.Add(59 * time.Minute)
	if d, _ := e.Decide(context.Background(), dirs.bash("make")); d.Effect != rules.Allow {
		t.Errorf("within the hour: %s", d.Effect)
	}
	now = now.Add(2 * time.Minute)
	if d, _ := e.Decide(context.Background(), dirs.bash("make")); d.Effect != rules.Deny {
		t.Errorf("after the hour: %s", d.Effect)
	}
}

func TestDenyAlways(t *testing.T) {
	dirs := newTestDirs(t)
	ws := dirs.ws
	ap := &funcApprover{answer: Answer{Verdict: DenyAlways, Reason: "never"}}
	e := &Evaluator{Approver: ap, Remember: &rules.Writer{Path: rules.LocalPath(ws)}}
	d, err := e.Decide(context.Background(), dirs.bash("curl evil.sh"))
	if err != nil || d.Effect != rules.Deny || !strings.Contains(d.Reason, "never") {
		t.Fatalf("%+v %v", d, err)
	}
	e2 := &Evaluator{Rules: mustLoad(t, ws), Profile: allowEverything{}}
	if d, _ := e2.Decide(context.Background(), dirs.bash("curl evil.sh")); d.Effect != rules.Deny {
		t.Errorf("saved deny did not apply even where the profile allows: %+v", d)
	}
}

func mustLoad(t *testing.T, ws string) *rules.Set {
	t.Helper()
	s, err := rules.Load(rules.Sources{Workspace: ws, Managed: "-", User: "-", NoClaude: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNoApproverAsksAndHeadlessDenies(t *testing.T) {
	dirs := newTestDirs(t)
	e := &Evaluator{Profile: dirs.profile(t, nil)}
	d, err := e.Decide(context.Background(), dirs.bash("make"))
	if err != nil || d.Effect != rules.Ask {
		t.Fatalf("no approver: %s %v", d.Effect, err)
	}
	if !errors.Is(d.Err(), ErrApprovalRequired) {
		t.Errorf("Decision.Err for ask: %v", d.Err())
	}
	e.Approver = &funcApprover{err: ErrApprovalRequired}
	d, err = e.Decide(context.Background(), dirs.bash("make"))
	if !errors.Is(err, ErrApprovalRequired) || d.Effect != rules.Deny || !strings.Contains(d.Reason, "headless") {
		t.Fatalf("headless: %+v %v", d, err)
	}
	e.Approver = &funcApprover{err: errors.New("socket closed")}
	d, err = e.Decide(context.Background(), dirs.bash("make"))
	if err == nil || d.Effect != rules.Deny {
		t.Fatalf("failing approver: %+v %v", d, err)
	}
}

func TestGrantsBoundToTheCall(t *testing.T) {
	dirs := newTestDirs(t)
	issuer := grant.NewRandomIssuer()
	prof := dirs.profile(t, nil)
	e := &Evaluator{
		Profile: prof, Issuer: issuer,
		Rules: rules.NewSet([]*rules.Rule{dirs.rule(t, rules.Allow, "Bash(git status)"), dirs.rule(t, rules.Allow, "Bash(cat *)")}),
	}
	call := dirs.bash("git status && cat README")
	d, err := e.Decide(context.Background(), call)
	if err != nil || d.Effect != rules.Allow {
		t.Fatalf("%+v %v", d, err)
	}
	// Two gated commands get grants; the read is allowed by the profile.
	if len(d.Grants) != 2 {
		t.Fatalf("%d grants, want 2", len(d.Grants))
	}
	want := grant.Binding{ExecutionID: "exec-1", Command: "git status && cat README", Dir: dirs.ws,
		Profile: prof.Fingerprint(), Kind: tool.KindCommandExecute, Target: "git status"}
	if _, err := issuer.Redeem(d.Grants[0].Token, want); err != nil {
		t.Fatalf("redeem: %v", err)
	}
	if _, err := issuer.Redeem(d.Grants[0].Token, want); !errors.Is(err, grant.ErrReplayed) {
		t.Errorf("second redeem: %v", err)
	}
	other := want
	other.Target, other.Command = "cat README", "rm -rf /"
	if _, err := issuer.Redeem(d.Grants[1].Token, other); err == nil {
		t.Error("a grant redeemed for another command")
	}
	b, _ := json.Marshal(d)
	if strings.Contains(string(b), "airlock-grant") {
		t.Error("grant tokens leak into the decision's JSON")
	}
}

type memRecorder struct {
	mu     sync.Mutex
	events []audit.Event
	fail   error
}

func (m *memRecorder) Append(e audit.Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	m.events = append(m.events, e)
	return nil
}

func TestRecorder(t *testing.T) {
	dirs := newTestDirs(t)
	rec := &memRecorder{}
	e := &Evaluator{Profile: dirs.profile(t, nil), Recorder: rec, Issuer: grant.NewRandomIssuer(),
		Rules: rules.NewSet([]*rules.Rule{dirs.rule(t, rules.Deny, "Bash(rm -rf *)"), dirs.rule(t, rules.Allow, "Bash(ls)")})}
	e.Decide(context.Background(), dirs.bash("rm -rf x"))
	e.Decide(context.Background(), dirs.bash("ls"))
	if len(rec.events) != 2 {
		t.Fatalf("%d events", len(rec.events))
	}
	ev := rec.events[0]
	if ev.Type != audit.TypeDecision || ev.Decision != "deny" || ev.Rule != "Bash(rm -rf *)" || ev.Layer != "workspace" ||
		ev.Requirement == nil || ev.Requirement.Target != "rm -rf x" || ev.ExecutionID != "exec-1" || ev.Tool != "Bash" {
		t.Errorf("event %+v", ev)
	}
	b, _ := json.Marshal(rec.events)
	if strings.Contains(string(b), "airlock-grant") {
		t.Error("a grant token reached the audit event")
	}
	// A decision that cannot be recorded is a denial.
	rec.fail = errors.New("disk full")
	d, err := e.Decide(context.Background(), dirs.bash("ls"))
	if err == nil || d.Effect != rules.Deny || d.Layer != LayerAudit || len(d.Grants) != 0 {
		t.Errorf("unrecordable decision: %+v %v", d, err)
	}
}

func TestRecorderWithAuditLog(t *testing.T) {
	dirs := newTestDirs(t)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	log, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	prof := dirs.profile(t, nil)
	e := &Evaluator{Profile: prof, Recorder: log}
	e.Decide(context.Background(), dirs.bash("git push"))
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"decision":"ask"`) || !strings.Contains(string(data), `"target":"git push"`) ||
		!strings.Contains(string(data), `"profile":"`+prof.Fingerprint()+`"`) {
		t.Errorf("audit log: %s", data)
	}
}

func TestConcurrentDecide(t *testing.T) {
	dirs := newTestDirs(t)
	ws := dirs.ws
	e := &Evaluator{Approver: &funcApprover{answer: Answer{Verdict: ApproveAlways}}, Remember: &rules.Writer{Path: rules.LocalPath(ws)}}
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if d, err := e.Decide(context.Background(), dirs.bash("echo "+strings.Repeat("x", i+1))); err != nil || d.Effect != rules.Allow {
				t.Errorf("%+v %v", d, err)
			}
		}(i)
	}
	wg.Wait()
	if n := mustLoad(t, ws).Len(); n != 20 {
		t.Errorf("%d saved rules, want 20", n)
	}
}
