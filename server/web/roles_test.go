package web_test

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserRoles: the page says which role a token has. With an
// agent's token it shows that agent's own pending call, with no answer
// buttons and no audit tab, and not another agent's; with a person's
// token the same call has its buttons and answering it unblocks the
// agent.
func TestBrowserRoles(t *testing.T) {
	d := startDaemon(t)
	tb := newTab(t)
	ws := t.TempDir()

	mine := d.decideAsync(decideReq{Tool: "Bash", Input: map[string]any{"command": "make mine"}, Workspace: ws,
		Agent: "builder", Session: "r1", Wait: "60s"})
	theirs := d.decideAsync(decideReq{Tool: "Bash", Input: map[string]any{"command": "make theirs"}, Workspace: ws,
		Agent: "other", Session: "r1", Wait: "60s"})

	tb.login(d, d.agentToken("builder"))
	tb.waitFor("the live stream", `document.getElementById("live").dataset.state === "live"`)
	tb.waitFor("the role", `document.getElementById("role").textContent.includes("Agent token of builder")`)
	tb.waitFor("the agent's own card", card("make mine")+` !== undefined`)
	if eval[bool](tb, card("make theirs")+` !== undefined`) {
		t.Error("an agent's token shows another agent's approval")
	}
	if n := eval[int](tb, card("make mine")+`.querySelectorAll("button[data-answer]").length`); n != 0 {
		t.Errorf("an agent's token shows %d answer buttons", n)
	}
	if !eval[bool](tb, `document.getElementById("tab-audit").hidden`) {
		t.Error("an agent's token shows the audit tab")
	}
	tb.shot("agent token")

	tb.do("log out", chromedp.Click(chromedp.ID("logout")), chromedp.WaitVisible(chromedp.ID("token")))
	tb.login(d, d.Token)
	tb.waitFor("the person's role", `document.getElementById("role").textContent.startsWith("Person token")`)
	tb.waitFor("both cards", card("make mine")+` !== undefined && `+card("make theirs")+` !== undefined`)
	if eval[bool](tb, `document.getElementById("tab-audit").hidden`) {
		t.Error("a person's token has no audit tab")
	}
	tb.settled(card("make mine"))
	tb.do("allow once", chromedp.Click(answerButton("make mine", "once")))
	if res := mine.result(t); res.Decision != "allow" {
		t.Fatalf("the agent got %+v after the person's answer, want allow", res)
	}
	// The answered card leaves when its event arrives, which moves the
	// other card up and makes it ignore clicks for a moment: wait for
	// both, or the click lands while it is settling and does nothing.
	tb.waitFor("the answered card to leave", card("make mine")+` === undefined`)
	tb.settled(card("make theirs"))
	tb.do("deny", chromedp.Click(answerButton("make theirs", "deny")))
	if res := theirs.result(t); res.Decision != "deny" {
		t.Fatalf("the other agent got %+v, want deny", res)
	}
}
