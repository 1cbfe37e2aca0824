package server

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/server/store"
)

// withPolicy writes the workspace's policy file.
func (r *rig) withPolicy(toml string) {
	r.t.Helper()
	if err := os.MkdirAll(r.ws+"/.airlock", 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(r.ws+"/.airlock/policy.toml", []byte(toml), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// call is the body of a decide of tool with input, as the AI SDK
// bootstrap hook sends it.
func (r *rig) call(toolName, input string) string {
	b, _ := json.Marshal(map[string]any{"tool": toolName, "input": json.RawMessage(input), "workspace": r.ws, "agent": "a", "session": "s", "wait": "0s"})
	return string(b)
}

func (r *rig) pending() []store.Approval {
	r.t.Helper()
	ps, err := r.st.PendingApprovals(context.Background(), r.clock.Now())
	if err != nil {
		r.t.Fatal(err)
	}
	return ps
}

// TestClaudeCodeToolClasses: what a Claude Code tool does decides it on
// /v1/decide as in the hook. Orchestration tools no rule names are
// allowed (the agent's own permissions apply), opaque and unknown ones go
// to a person, and a rule naming a tool decides it.
func TestClaudeCodeToolClasses(t *testing.T) {
	orchestration := []struct{ tool, input string }{
		{"Agent", `{"description":"look around","prompt":"list the files","subagent_type":"general-purpose","run_in_background":false}`},
		{"AskUserQuestion", `{"questions":[{"question":"Which?","header":"Pick","options":[{"label":"a","description":"A"}],"multiSelect":false}]}`},
		{"TodoWrite", `{"todos":[{"content":"x","status":"pending","activeForm":"doing x"}]}`},
		{"EnterPlanMode", `{}`},
		{"ExitPlanMode", `{"plan":"do it"}`},
		{"Skill", `{"skill":"pdf"}`},
		{"TaskCreate", `{"subject":"s","description":"d"}`},
		{"Task", `{"description":"d","prompt":"p","subagent_type":"x"}`},
	}
	t.Run("orchestration is allowed, no approval opens", func(t *testing.T) {
		r := newRig(t)
		for _, c := range orchestration {
			d := r.decide(r.call(c.tool, c.input))
			if d.Decision != "allow" || d.ApprovalID != "" || !strings.Contains(d.Reason, "steers the agent itself") {
				t.Errorf("%s: %+v, want allow saying the tool steers the agent", c.tool, d)
			}
		}
		if ps := r.pending(); len(ps) != 0 {
			t.Errorf("approvals opened for orchestration tools: %+v", ps)
		}
		var au struct{ Events []map[string]any }
		r.must(200, "GET", "/v1/audit?tool=Agent", "", &au)
		if len(au.Events) != 1 || au.Events[0]["decision"] != "allow" || au.Events[0]["layer"] != "tool" {
			t.Fatalf("audit of the Agent call: %+v", au.Events)
		}
		detail, _ := au.Events[0]["detail"].(map[string]any)
		if detail["class"] != "orchestration" || detail["workspace"] != r.ws || au.Events[0]["session_id"] != "s" {
			t.Errorf("audit detail: %+v", au.Events[0])
		}
	})
	t.Run("opaque and unknown tools are asked about, not denied", func(t *testing.T) {
		r := newRig(t)
		for _, c := range []struct{ tool, input string }{
			{"BrandNewTool", `{"anything":[1,2,3]}`},
			{"EnterWorktree", `{"name":"feature"}`},
			{"Workflow", `{}`},
		} {
			d := r.decide(r.call(c.tool, c.input))
			if d.Decision != "ask" || d.ApprovalID == "" || !strings.Contains(d.Reason, "tool.invoke "+c.tool) {
				t.Errorf("%s: %+v, want ask with an approval for tool.invoke %s", c.tool, d, c.tool)
			}
		}
		if ps := r.pending(); len(ps) != 3 {
			t.Errorf("pending approvals: %d, want 3", len(ps))
		}
		// The person's answer decides it, as for any call.
		id := r.decide(r.call("BrandNewTool", `{"anything":[1,2,3]}`)).ApprovalID
		r.must(200, "POST", "/v1/approvals/"+id, `{"answer":"once"}`, nil)
		if d := r.decide(r.call("BrandNewTool", `{"anything":[1,2,3]}`)); d.Decision != "allow" || d.Approval != "once" {
			t.Errorf("BrandNewTool after an answer: %+v", d)
		}
	})
	t.Run("a deny rule naming the tool denies it", func(t *testing.T) {
		r := newRig(t)
		r.withPolicy("[[rule]]\neffect = \"deny\"\nmatch = \"Agent\"\nreason = \"no subagents here\"\n")
		if d := r.decide(r.call("Agent", orchestration[0].input)); d.Decision != "deny" || d.Rule != "Agent" || d.Reason != "no subagents here" {
			t.Errorf("Agent under deny Agent: %+v", d)
		}
		// The rule names Agent only: the other orchestration tools stay allowed.
		if d := r.decide(r.call("TodoWrite", orchestration[2].input)); d.Decision != "allow" {
			t.Errorf("TodoWrite under deny Agent: %+v", d)
		}
	})
	t.Run("ask and allow rules naming the tool decide it", func(t *testing.T) {
		r := newRig(t)
		r.withPolicy("[[rule]]\neffect = \"ask\"\nmatch = \"Agent\"\n\n[[rule]]\neffect = \"allow\"\nmatch = \"BrandNewTool\"\n\n[[rule]]\neffect = \"deny\"\nmatch = \"EnterWorktree\"\n")
		if d := r.decide(r.call("Agent", orchestration[0].input)); d.Decision != "ask" || d.ApprovalID == "" || d.Rule != "Agent" {
			t.Errorf("Agent under ask Agent: %+v", d)
		}
		if d := r.decide(r.call("BrandNewTool", `{}`)); d.Decision != "allow" || d.Rule != "BrandNewTool" {
			t.Errorf("BrandNewTool under allow BrandNewTool: %+v", d)
		}
		if d := r.decide(r.call("EnterWorktree", `{}`)); d.Decision != "deny" || d.Rule != "EnterWorktree" {
			t.Errorf("EnterWorktree under deny EnterWorktree: %+v", d)
		}
	})
	t.Run("input the gate could read two ways is still refused", func(t *testing.T) {
		r := newRig(t)
		// A string input holding a duplicate key reaches the preparer as
		// it was written.
		body, _ := json.Marshal(map[string]any{"tool": "Agent", "input": `{"prompt":"a","prompt":"b"}`, "workspace": r.ws})
		if code, data := r.do("POST", "/v1/decide", string(body)); code == 200 && strings.Contains(string(data), `"allow"`) {
			t.Errorf("Agent with a duplicate key: %d %s", code, data)
		}
	})
}

// TestClaudeCodeFieldsTolerated: fields Claude Code sends today that the
// gate does not read are left alone; a wrong type in a field it reads is
// refused (the control).
func TestClaudeCodeFieldsTolerated(t *testing.T) {
	r := newRig(t)
	r.withPolicy("[[rule]]\neffect = \"allow\"\nmatch = \"Read(/**)\"\n\n[[rule]]\neffect = \"allow\"\nmatch = \"Grep(/**)\"\n\n[[rule]]\neffect = \"allow\"\nmatch = \"WebFetch(domain:example.com)\"\n")
	for _, c := range []struct{ tool, input string }{
		{"Read", `{"file_path":"` + r.ws + `/a.txt","allow_large":true,"offset":1,"limit":10}`},
		{"Grep", `{"pattern":"x","path":"` + r.ws + `","-o":true,"output_mode":"content"}`},
		{"WebFetch", `{"url":"https://example.com/a","prompt":"p","offset":2}`},
	} {
		if d := r.decide(r.call(c.tool, c.input)); d.Decision != "allow" {
			t.Errorf("%s %s: %+v, want allow", c.tool, c.input, d)
		}
	}
	if d := r.decide(r.call("Read", `{"file_path":7,"allow_large":true}`)); d.Decision != "deny" || !strings.Contains(d.Reason, "file_path") {
		t.Errorf("Read with a number for file_path: %+v, want deny naming file_path", d)
	}
}
