package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func withCaps(agent, workspace int) rigOpt {
	return func(c *Config) { c.MaxPendingPerAgent, c.MaxPendingPerWorkspace = agent, workspace }
}

// TestPendingCapped: an agent, or a workspace, with as many approvals
// pending as allowed gets 429 for a call that would open another; joining
// a pending one still works, and an answer makes room.
func TestPendingCapped(t *testing.T) {
	r := newRig(t, withCaps(2, 3))
	first := r.decide(r.bash("make one"))
	r.decide(r.bash("make two"))
	before := r.snapshot()
	code, out := r.do("POST", "/v1/decide", r.bash("make three"))
	if code != 429 || !strings.Contains(string(out), "too_many_pending") || !strings.Contains(string(out), "--max-pending-agent") {
		t.Fatalf("a third approval of agent a: %d %s", code, out)
	}
	after := r.snapshot()
	if len(after.Pending) != len(before.Pending) || len(after.Events) != len(before.Events) {
		t.Fatalf("the refused call opened an approval: %d pending, %d events", len(after.Pending), len(after.Events))
	}
	// The same call again joins its approval.
	if d := r.decide(r.bash("make one")); d.ApprovalID != first.ApprovalID {
		t.Fatalf("joining a pending approval: %+v", d)
	}
	// Another agent: its own cap, but the workspace's is reached at 3.
	r.decide(r.bash("make four", "agent", "b"))
	code, out = r.do("POST", "/v1/decide", r.bash("make five", "agent", "b"))
	if code != 429 || !strings.Contains(string(out), "--max-pending-workspace") {
		t.Fatalf("a fourth approval in the workspace: %d %s", code, out)
	}
	// An answer makes room.
	r.must(200, "POST", "/v1/approvals/"+first.ApprovalID, `{"answer":"deny"}`, nil)
	if d := r.decide(r.bash("make three")); d.Decision != "ask" || d.ApprovalID == "" {
		t.Fatalf("after an answer: %+v", d)
	}
}

// TestApprovalsPage: the list pages with limit and after, without a gap
// or a repeat, and refuses a bad limit.
func TestApprovalsPage(t *testing.T) {
	r := newRig(t)
	var want []string
	for i := range 5 {
		d := r.decide(r.bash(fmt.Sprintf("make t%d", i)))
		want = append(want, d.ApprovalID)
		r.clock.Add(1) // distinct creation times, in order
	}
	var got []string
	path := "/v1/approvals?limit=2"
	for range 10 {
		var page struct {
			Approvals []Approval
			Next      string
		}
		code, out := r.do("GET", path, "")
		if code != 200 || json.Unmarshal(out, &page) != nil || len(page.Approvals) > 2 {
			t.Fatalf("%s: %d %s", path, code, out)
		}
		for _, a := range page.Approvals {
			got = append(got, a.ID)
		}
		if page.Next == "" {
			break
		}
		path = "/v1/approvals?limit=2&after=" + page.Next
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("pages %v, want %v", got, want)
	}
	for _, q := range []string{"limit=0", "limit=201", "limit=x", "cursor=1", "limit=1&limit=2"} {
		r.wantError(400, "bad_request", "GET", "/v1/approvals?"+q, "")
	}
}

// TestApprovalsPageBytes: a page of large calls ends at the byte budget,
// and the next page goes on where it ended.
func TestApprovalsPageBytes(t *testing.T) {
	r := newRig(t)
	big := strings.Repeat("x", 3<<20) // 3 MiB of input each
	for i := range 4 {
		b, _ := json.Marshal(map[string]any{"tool": "Write", "workspace": r.ws,
			"input": map[string]any{"file_path": fmt.Sprintf("%s/f%d", r.ws, i), "content": big}})
		if d := r.decide(string(b)); d.Decision != "ask" {
			t.Fatalf("decide %d: %+v", i, d)
		}
		r.clock.Add(1)
	}
	seen := 0
	path := "/v1/approvals"
	for range 10 {
		var page struct {
			Approvals []Approval
			Next      string
		}
		code, out := r.do("GET", path, "")
		if code != 200 || json.Unmarshal(out, &page) != nil {
			t.Fatalf("%s: %d %.200s", path, code, out)
		}
		if len(out) > maxPageBytes+(4<<20) {
			t.Fatalf("a page of %d bytes", len(out))
		}
		seen += len(page.Approvals)
		if page.Next == "" {
			break
		}
		path = "/v1/approvals?after=" + page.Next
	}
	if seen != 4 {
		t.Fatalf("the pages held %d approvals, want 4", seen)
	}
}
