package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/server/web"
)

// js quotes s as a JavaScript string literal.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// asked is a client call waiting in POST /v1/decide with wait.
type asked struct {
	done chan struct{}
	res  decision
	err  error
}

func (d *daemon) decideAsync(req decideReq) *asked {
	a := &asked{done: make(chan struct{})}
	go func() {
		defer close(a.done)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		a.res, a.err = d.decide(ctx, req)
	}()
	return a
}

// result waits for the client's answer. The daemon holds the request for
// at most the wait it was given, so this cannot hang for long.
func (a *asked) result(t *testing.T) decision {
	t.Helper()
	<-a.done
	if a.err != nil {
		t.Fatalf("POST /v1/decide: %v", a.err)
	}
	return a.res
}

// write creates a file and its directory.
func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (a *asked) pending() bool {
	select {
	case <-a.done:
		return false
	default:
		return true
	}
}

// card is the JavaScript expression for the approval card whose summary
// contains text.
func card(text string) string {
	return `[...document.querySelectorAll("li.approval")].find((li) => li.textContent.includes(` + js(text) + `))`
}

// answerButton selects the answer's button on the card showing text.
func answerButton(text, answer string) chromedp.JSPath {
	return chromedp.JSPath(card(text) + `.querySelector('button[data-answer="` + answer + `"]')`)
}

// settled waits until the card (a JavaScript expression) takes clicks: the
// page ignores them for a moment after a card appears or moves.
func (tb tab) settled(cardExpr string) {
	tb.t.Helper()
	tb.waitFor("the card to settle", `(() => { const c = `+cardExpr+`; return !!c && !c.dataset.settling; })()`)
}

// TestBrowserApprovals is the page's whole story in a real headless
// Chromium against a real "airlock serve": log in with a pasted token, an
// agent's call appears live, "Always allow" unblocks the agent and saves
// the rule, "Deny" denies, input that looks like HTML stays text, the audit
// view shows and filters the decisions, and logging out forgets the token.
func TestBrowserApprovals(t *testing.T) {
	d := startDaemon(t)
	tb := newTab(t)
	ws := t.TempDir()

	// The page is served with the policy it is written for, so the
	// violations the tab records are real.
	res, err := http.Get(d.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got := res.Header.Get("Content-Security-Policy"); got != web.ContentSecurityPolicy {
		t.Errorf("the daemon serves the page with Content-Security-Policy %q; route \"/\" through web.Handler()", got)
	}

	// A token the daemon does not know is refused, and the page says so.
	tb.login(d, "alk_not-a-real-token")
	tb.waitFor("the refusal", `document.getElementById("login-error").textContent.includes("refused")`)
	tb.shot("login refused")

	tb.login(d, d.Token)
	tb.waitFor("the live stream", `document.getElementById("live").dataset.state === "live"`)
	if got := eval[string](tb, `sessionStorage.getItem("airlock.token")`); got != d.Token {
		t.Errorf("sessionStorage token = %q, want the pasted token", got)
	}
	if n := eval[int](tb, `localStorage.length`); n != 0 {
		t.Errorf("localStorage has %d items; the token must stay in sessionStorage only", n)
	}
	// A mark on the window: still there later proves the approval came
	// in without a reload.
	eval[chromedp.Void](tb, `window.__sameDocument = true`)
	tb.shot("logged in, nothing pending")

	command := "git push origin main && echo pushed"
	call := decideReq{
		Tool: "Bash", Input: map[string]any{"command": command}, Workspace: ws,
		Agent: "browser-test", Session: "s1", Wait: "60s",
	}

	t.Run("always allow", func(t *testing.T) {
		tb := tb.on(t)
		agent := d.decideAsync(call)
		tb.waitFor("the approval to appear", card(command)+` !== undefined`)
		if !eval[bool](tb, `window.__sameDocument === true`) {
			t.Fatal("the page reloaded; the approval must arrive over the event stream")
		}
		chips := eval[[]string](tb, `[...`+card(command)+`.querySelectorAll(".argv .chip")].map((c) => c.textContent)`)
		if got := strings.Join(chips, " "); !strings.Contains(got, "git push origin main") || !strings.Contains(got, "echo pushed") {
			t.Errorf("argv chips = %q, want the parsed words of %q", chips, command)
		}
		rule := eval[string](tb, `(`+card(command)+`.querySelector(".rules dd code") || {}).textContent || ""`)
		if !strings.Contains(rule, "git push origin main") {
			t.Errorf("the rule \"always\" saves reads %q", rule)
		}
		countdown := eval[string](tb, card(command)+`.querySelector(".countdown").textContent`)
		if !strings.Contains(countdown, ":") {
			t.Errorf("countdown = %q", countdown)
		}
		// Every field has a label, every button a name.
		if bad := eval[[]string](tb, `[...document.querySelectorAll("input, select")].filter((e) => !e.labels.length).map((e) => e.id || e.name)
			.concat([...document.querySelectorAll("button")].filter((b) => !b.textContent.trim()).map((b) => b.outerHTML))`); len(bad) > 0 {
			t.Errorf("fields without a label or buttons without text: %q", bad)
		}
		tb.shot("approval pending")
		if !agent.pending() {
			t.Fatalf("the agent's call returned before anyone answered: %+v", agent.result(t))
		}

		tb.settled(card(command))
		tb.do("click Always allow", chromedp.Click(answerButton(command, "always")))
		res := agent.result(t)
		if res.Decision != "allow" {
			t.Fatalf("after Always allow the agent got %+v, want allow", res)
		}
		tb.waitFor("the card to go", card(command)+` === undefined`)
		tb.shot("after always allow")

		local, err := os.ReadFile(rules.LocalPath(ws))
		if err != nil {
			t.Fatalf("the always rule was not written to the workspace's local rules: %v", err)
		}
		if !strings.Contains(string(local), rule) {
			t.Errorf("%s does not hold %q:\n%s", rules.LocalPath(ws), rule, local)
		}
		again := call
		again.Wait = ""
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res2, err := d.decide(ctx, again)
		if err != nil {
			t.Fatal(err)
		}
		if res2.Decision != "allow" || res2.ApprovalID != "" {
			t.Errorf("the same call again: %+v, want allow without an approval", res2)
		}
	})

	// Input an agent wrote that looks like markup must show as text.
	xss := `git push origin "<img src=x onerror=window.__xss=1>"`
	t.Run("deny and markup as text", func(t *testing.T) {
		tb := tb.on(t)
		agent := d.decideAsync(decideReq{
			Tool: "Bash", Input: map[string]any{"command": xss}, Workspace: ws,
			Agent: "browser-test", Session: "s2", Wait: "60s",
		})
		tb.waitFor("the approval to appear", card("<img src=x onerror=")+` !== undefined`)
		if n := eval[int](tb, `document.querySelectorAll("li.approval img").length`); n != 0 {
			t.Errorf("%d <img> elements in the card: the input was parsed as HTML", n)
		}
		if eval[bool](tb, `window.__xss !== undefined`) {
			t.Error("the input's onerror handler ran")
		}
		if !eval[bool](tb, card("<img src=x onerror=")+`.querySelector(".command").textContent.includes("<img src=x onerror=window.__xss=1>")`) {
			t.Error("the command text is not shown as written")
		}
		tb.shot("markup shown as text")

		// By keyboard this time: the answers are real buttons.
		// Tab from the button before it, as a person would; the browser
		// shows focus it reached by keyboard.
		tb.settled(card("<img src=x onerror="))
		tb.do("Tab to Deny",
			chromedp.Focus(answerButton("<img src=x onerror=", "always")),
			chromedp.KeyEvent("\t"))
		if !eval[bool](tb, `document.activeElement.dataset.answer === "deny"`) {
			t.Fatal("Tab from Always allow did not reach Deny")
		}
		if outline := eval[string](tb, `getComputedStyle(document.activeElement).outlineStyle`); outline == "none" || outline == "" {
			t.Errorf("the focused button has no visible outline (outline-style %q)", outline)
		}
		tb.shot("deny focused")
		tb.do("Deny by keyboard", chromedp.KeyEvent("\r"))
		if res := agent.result(t); res.Decision != "deny" {
			t.Fatalf("after Deny the agent got %+v, want deny", res)
		}
		tb.waitFor("the card to go", card("<img src=x onerror=")+` === undefined`)
		// The answered event may remove the card before the answer's own
		// response arrives; the notice follows that response.
		tb.waitFor("the page to say it denied the call", `document.getElementById("notice").textContent.startsWith("Denied")`)
	})

	t.Run("edit, network, always for 10m, always deny", func(t *testing.T) {
		tb := tb.on(t)
		ws := t.TempDir()
		write(t, filepath.Join(ws, "notes.txt"), "hello <script>window.__xss=2</script>\n")
		// An ask rule for the file, since the default profile allows
		// edits inside the workspace.
		write(t, filepath.Join(ws, ".airlock", "policy.toml"), "[[rule]]\neffect = \"ask\"\nmatch = \"Edit(/notes.txt)\"\n")
		base := decideReq{Workspace: ws, Agent: "browser-test", Session: "s3", Wait: "60s"}
		edit, fetch, curl := base, base, base
		edit.Tool, edit.Input = "Edit", map[string]any{"file_path": filepath.Join(ws, "notes.txt"),
			"old_string": "hello <script>window.__xss=2</script>", "new_string": "bye"}
		fetch.Tool, fetch.Input = "WebFetch", map[string]any{"url": "https://example.com/", "prompt": "read it"}
		curl.Tool, curl.Input = "Bash", map[string]any{"command": "curl -s https://example.org/"}
		editing, fetching, curling := d.decideAsync(edit), d.decideAsync(fetch), d.decideAsync(curl)

		cardOf := func(tool string) string { return `document.querySelector('li.approval[data-tool="` + tool + `"]')` }
		tb.waitFor("three approvals", `!!(`+cardOf("Edit")+` && `+cardOf("WebFetch")+` && `+cardOf("Bash")+`)`)
		del := eval[[]string](tb, `[...`+cardOf("Edit")+`.querySelectorAll(".diff .del")].map((l) => l.textContent)`)
		add := eval[[]string](tb, `[...`+cardOf("Edit")+`.querySelectorAll(".diff .add")].map((l) => l.textContent)`)
		if strings.Join(del, "") != "-hello <script>window.__xss=2</script>\n" || strings.Join(add, "") != "+bye\n" {
			t.Errorf("diff lines: removed %q, added %q", del, add)
		}
		colours := eval[[]string](tb, `[".diff .del", ".diff .add"].map((s) => getComputedStyle(`+cardOf("Edit")+`.querySelector(s)).backgroundColor)`)
		if colours[0] == colours[1] || strings.Contains(colours[0], "0, 0, 0, 0") || strings.Contains(colours[1], "0, 0, 0, 0") {
			t.Errorf("removed and added lines are not coloured apart: %q", colours)
		}
		if eval[int](tb, `document.querySelectorAll("li.approval script").length`) != 0 || eval[bool](tb, `window.__xss !== undefined`) {
			t.Error("the edit's text became a script")
		}
		if hosts := eval[[]string](tb, `[...`+cardOf("WebFetch")+`.querySelectorAll(".network code")].map((c) => c.textContent)`); len(hosts) != 1 || hosts[0] != "example.com:443" {
			t.Errorf("WebFetch hosts shown: %q, want example.com:443", hosts)
		}
		tb.shot("edit and network")

		tb.settled(cardOf("Edit"))
		tb.do("Allow once the edit", chromedp.Click(chromedp.CSS(`li.approval[data-tool="Edit"] button[data-answer="once"]`)))
		if res := editing.result(t); res.Decision != "allow" {
			t.Errorf("after Allow once the edit got %+v", res)
		}
		// The next click waits for the list to settle: a card leaving
		// moves the ones below it.
		tb.waitFor("the edit's card to go", cardOf("Edit")+` === null`)
		tb.settled(cardOf("WebFetch"))
		// The fetch's rule (Net(example.com:443)) allows more than the
		// call, so "Always allow" asks first.
		tb.do("Always allow the fetch for 10 minutes",
			chromedp.SetValue(chromedp.CSS(`li.approval[data-tool="WebFetch"] select`), "10m"),
			chromedp.Click(chromedp.CSS(`li.approval[data-tool="WebFetch"] button[data-answer="always"]`)))
		tb.waitFor("the confirmation", `!`+cardOf("WebFetch")+`.querySelector(".confirm").hidden`)
		if !fetching.pending() {
			t.Fatal("Always allow of a broader rule answered before it was confirmed")
		}
		tb.do("confirm", chromedp.Click(chromedp.CSS(`li.approval[data-tool="WebFetch"] button[data-confirm="always"]`)))
		if res := fetching.result(t); res.Decision != "allow" {
			t.Errorf("after Always allow the fetch got %+v", res)
		}
		tb.waitFor("the fetch's card to go", cardOf("WebFetch")+` === null`)
		tb.settled(cardOf("Bash"))
		tb.do("Always deny the curl", chromedp.Click(chromedp.CSS(`li.approval[data-tool="Bash"] button[data-answer="always_deny"]`)))
		if res := curling.result(t); res.Decision != "deny" {
			t.Errorf("after Always deny the curl got %+v", res)
		}
		tb.waitFor("the cards to go", `document.querySelectorAll("li.approval").length === 0`)

		local, err := os.ReadFile(rules.LocalPath(ws))
		if err != nil {
			t.Fatal(err)
		}
		// The fetch's rule expires in about 10 minutes; the deny has no
		// expiry.
		m := regexp.MustCompile(`(?s)effect = "allow"\s*match = "[^"]*example\.com[^"]*"[^[]*expires = (\S+)`).FindSubmatch(local)
		if m == nil {
			t.Fatalf("no expiring allow rule for example.com in %s:\n%s", rules.LocalPath(ws), local)
		}
		if exp, err := time.Parse(time.RFC3339, string(m[1])); err != nil || time.Until(exp) < 8*time.Minute || time.Until(exp) > 11*time.Minute {
			t.Errorf("the 10-minute rule expires at %s (%v)", m[1], err)
		}
		if !regexp.MustCompile(`effect = "deny"\s*match = "Bash\(curl[^"]*example\.org`).Match(local) {
			t.Errorf("no deny rule for the curl in %s:\n%s", rules.LocalPath(ws), local)
		}
		again := curl
		again.Wait = ""
		if res, err := d.decide(context.Background(), again); err != nil || res.Decision != "deny" || res.ApprovalID != "" {
			t.Errorf("the always-denied call again: %+v %v, want deny without asking", res, err)
		}
	})

	t.Run("a moved card ignores clicks", func(t *testing.T) {
		tb := tb.on(t)
		a, b := "git push origin topic-a", "git push origin topic-b"
		agentA := d.decideAsync(decideReq{Tool: "Bash", Input: map[string]any{"command": a}, Workspace: ws,
			Agent: "browser-test", Session: "s6", Wait: "60s"})
		tb.waitFor("the first approval", card(a)+` !== undefined`)
		agentB := d.decideAsync(decideReq{Tool: "Bash", Input: map[string]any{"command": b}, Workspace: ws,
			Agent: "browser-test", Session: "s6", Wait: "60s"})
		tb.settled(card(b))
		// From here on a card that moves stays unclickable for an hour,
		// so what follows does not depend on timing.
		eval[chromedp.Void](tb, `document.documentElement.dataset.settleMs = "3600000"`)
		defer eval[chromedp.Void](tb, `delete document.documentElement.dataset.settleMs`)
		// Someone else answers the card above; the one below slides up.
		idA := eval[string](tb, card(a)+`.dataset.id`)
		if err := d.do(context.Background(), "POST", "/v1/approvals/"+idA, map[string]string{"answer": "deny"}, nil); err != nil {
			t.Fatal(err)
		}
		tb.waitFor("the answered card to go", card(a)+` === undefined`)
		if res := agentA.result(t); res.Decision != "deny" {
			t.Errorf("the card answered through the API gave %+v", res)
		}
		if !eval[bool](tb, card(b)+`.dataset.settling === "true"`) {
			t.Fatal("the card that moved takes clicks at once")
		}
		tb.do("click the moved card", chromedp.Click(answerButton(b, "always")))
		if status := eval[string](tb, card(b)+`.querySelector(".card-status").textContent`); status != "" || !agentB.pending() {
			t.Errorf("a click on a card that just moved was taken (status %q)", status)
		}
		tb.shot("moved card ignores clicks")
		idB := eval[string](tb, card(b)+`.dataset.id`)
		if err := d.do(context.Background(), "POST", "/v1/approvals/"+idB, map[string]string{"answer": "deny"}, nil); err != nil {
			t.Fatal(err)
		}
		if res := agentB.result(t); res.Decision != "deny" {
			t.Errorf("after the API's deny the agent got %+v", res)
		}
		tb.waitFor("the card to go", card(b)+` === undefined`)
	})

	t.Run("reconnect with Last-Event-ID", func(t *testing.T) {
		tb := tb.on(t)
		before := len(tb.sent("/v1/events"))
		d.kill()
		tb.waitFor("the page to notice", `document.getElementById("live").dataset.state === "reconnecting"`)
		tb.shot("daemon gone")
		d.start()
		tb.waitFor("the stream again", `document.getElementById("live").dataset.state === "live"`)
		streams := tb.sent("/v1/events")[before:]
		if len(streams) == 0 {
			t.Fatal("the page did not reconnect to /v1/events")
		}
		if id := streams[len(streams)-1].Headers["last-event-id"]; id == "" {
			var names []string
			for k := range streams[len(streams)-1].Headers {
				names = append(names, k)
			}
			t.Errorf("the reconnection sent no Last-Event-ID; its headers: %v", names)
		}
		// And the stream works: a new call appears without a reload.
		cmd := "git push origin release"
		agent := d.decideAsync(decideReq{Tool: "Bash", Input: map[string]any{"command": cmd}, Workspace: ws,
			Agent: "browser-test", Session: "s4", Wait: "60s"})
		tb.waitFor("the approval after the restart", card(cmd)+` !== undefined`)
		if !eval[bool](tb, `window.__sameDocument === true`) {
			t.Error("the page reloaded")
		}
		tb.settled(card(cmd))
		tb.do("Allow once", chromedp.Click(answerButton(cmd, "once")))
		if res := agent.result(t); res.Decision != "allow" {
			t.Errorf("after Allow once the agent got %+v", res)
		}
	})

	t.Run("audit", func(t *testing.T) {
		tb := tb.on(t)
		tb.do("open the audit view", chromedp.Click(chromedp.ID("tab-audit")))
		tb.waitFor("audit rows", `document.querySelectorAll("#audit-rows tr").length > 0`)
		tb.shot("audit all")

		tb.do("filter deny",
			chromedp.SetValue(chromedp.ID("audit-decision"), "deny"),
			chromedp.Click(chromedp.CSS(`#audit-form button[type=submit]`)))
		tb.waitFor("deny rows", `(() => { const d = [...document.querySelectorAll("#audit-rows td.decision")].map((c) => c.textContent);
			return d.length > 0 && d.every((x) => x === "deny"); })()`)
		if !eval[bool](tb, `document.getElementById("audit-rows").textContent.includes("<img src=x onerror=")`) {
			t.Error("the denied call is not in the filtered audit view")
		}
		tb.shot("audit deny")

		tb.do("filter allow",
			chromedp.SetValue(chromedp.ID("audit-decision"), "allow"),
			chromedp.Click(chromedp.CSS(`#audit-form button[type=submit]`)))
		tb.waitFor("allow rows", `(() => { const d = [...document.querySelectorAll("#audit-rows td.decision")].map((c) => c.textContent);
			return d.length > 0 && d.every((x) => x === "allow"); })()`)
		tb.shot("audit allow")
	})

	t.Run("logout", func(t *testing.T) {
		tb := tb.on(t)
		if url := eval[string](tb, `location.href`); strings.Contains(url, d.Token) {
			t.Errorf("the token is in the address: %s", url)
		}
		api := tb.sent("/v1/")
		if len(api) == 0 {
			t.Error("no API requests were seen; the checks below would prove nothing")
		}
		for _, r := range tb.sent("") {
			if strings.Contains(r.URL, d.Token) {
				t.Errorf("a request carried the token in its address: %s", r.URL)
			}
		}
		for _, r := range api {
			if r.Headers["authorization"] != "Bearer "+d.Token && r.Headers["authorization"] != "Bearer alk_not-a-real-token" {
				t.Errorf("%s was sent with Authorization %q", r.URL, r.Headers["authorization"])
			}
		}
		tb.do("log out", chromedp.Click(chromedp.ID("logout")), chromedp.WaitVisible(chromedp.ID("token")))
		if got := eval[string](tb, `String(sessionStorage.getItem("airlock.token"))`); got != "null" {
			t.Errorf("after logout sessionStorage still holds %q", got)
		}
		tb.shot("logged out")
	})

	t.Run("expiry", func(t *testing.T) {
		tb := tb.on(t)
		// A daemon whose approvals expire soon; long enough for the page
		// to show one first on a busy machine.
		d2 := startDaemon(t, "--approval-ttl", "8s")
		tb.login(d2, d2.Token)
		tb.waitFor("the live stream", `document.getElementById("live").dataset.state === "live"`)
		cmd := "git push origin nightly"
		agent := d2.decideAsync(decideReq{Tool: "Bash", Input: map[string]any{"command": cmd}, Workspace: ws,
			Agent: "browser-test", Session: "s5", Wait: "60s"})
		tb.waitFor("the approval", card(cmd)+` !== undefined`)
		tb.shot("about to expire")
		if res := agent.result(t); res.Decision != "deny" {
			t.Errorf("an expired approval gave the agent %+v, want deny", res)
		}
		tb.waitFor("the expired card to go", card(cmd)+` === undefined`)
	})
}
