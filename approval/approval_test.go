package approval

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"

	"github.com/airlockhq/airlock/gate"
	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/tool"
)

func call(ws, command string) tool.Call {
	in, _ := json.Marshal(map[string]string{"command": command})
	return tool.Call{Tool: "Bash", Input: in, Workspace: ws, Home: "/home/u"}
}

// terminal runs one prompt with the given typed input and returns the
// decision and what was shown.
func terminal(t *testing.T, e *gate.Evaluator, typed, command string) (gate.Decision, string) {
	t.Helper()
	var out strings.Builder
	e.Approver = &Terminal{In: strings.NewReader(typed), Out: &out}
	d, err := e.Decide(context.Background(), call("/ws", command))
	if err != nil {
		t.Fatalf("%q: %v", typed, err)
	}
	return d, out.String()
}

func TestTerminalAnswers(t *testing.T) {
	tests := []struct {
		typed    string
		effect   rules.Effect
		approval string
	}{
		{"y\n", rules.Allow, "once"},
		{"maybe\nn\n", rules.Deny, "deny"},
		{"", rules.Deny, "deny"}, // end of input
		{"x\nx\nx\ny\n", rules.Deny, "deny"},
		{"y", rules.Deny, "deny"}, // no line end: the line was never entered
		{"y\r", rules.Allow, "once"},
		{"y\r\n", rules.Allow, "once"},
		{"maybe\r\ny\r\n", rules.Allow, "once"},
		{strings.Repeat(" ", 5000) + "y\n", rules.Deny, "deny"}, // too long to be an answer
		{"y" + strings.Repeat("x", 5000) + "\ny\n", rules.Allow, "once"},
	}
	for _, tt := range tests {
		d, shown := terminal(t, &gate.Evaluator{}, tt.typed, "git push")
		if d.Effect != tt.effect || d.Approval != tt.approval {
			t.Errorf("%q: %s %q, want %s %q", tt.typed, d.Effect, d.Approval, tt.effect, tt.approval)
		}
		if !strings.Contains(shown, "command.execute git push") || !strings.Contains(shown, "[a] and [h] save: allow Bash(git push)") {
			t.Errorf("prompt does not show the requirement and the rule it would save:\n%s", shown)
		}
	}
}

func TestTerminalAlwaysWritesLocalRules(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "ws")
	w := &rules.Writer{Path: rules.LocalPath(ws)}
	e := &gate.Evaluator{Remember: w}
	var out strings.Builder
	e.Approver = &Terminal{In: strings.NewReader("a\n"), Out: &out}
	if d, err := e.Decide(context.Background(), call(ws, "make && make install")); err != nil || d.Effect != rules.Allow {
		t.Fatalf("%+v %v", d, err)
	}
	e.Approver = &Terminal{In: strings.NewReader("h\n"), Out: &out, While: 2 * time.Hour}
	if d, _ := e.Decide(context.Background(), call(ws, "npm test")); d.Approval != "for 2h0m0s" {
		t.Fatalf("approval %q", d.Approval)
	}
	e.Approver = &Terminal{In: strings.NewReader("d\n"), Out: &out}
	if d, _ := e.Decide(context.Background(), call(ws, "curl x")); d.Effect != rules.Deny {
		t.Fatalf("always deny: %s", d.Effect)
	}
	set, err := rules.Load(rules.Sources{Workspace: ws, Managed: "-", User: "-", NoClaude: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range set.Rules() {
		s := string(r.Effect) + " " + r.Match
		if !r.Expires.IsZero() {
			s += " (expires)"
		}
		got = append(got, s)
	}
	// "curl x" also connects to x:80, so "always deny" saves both.
	want := "allow Bash(make),allow Bash(make install),allow Bash(npm test) (expires),deny Bash(curl x),deny Net(x:80)"
	if strings.Join(got, ",") != want {
		t.Errorf("local rules %v, want %s", got, want)
	}
}

func TestTerminalCancelled(t *testing.T) {
	r, w := io.Pipe() // nothing is ever typed
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	e := &gate.Evaluator{Approver: &Terminal{In: r, Out: io.Discard}}
	d, err := e.Decide(ctx, call("/ws", "make"))
	if err != nil || d.Effect != rules.Deny {
		t.Fatalf("%+v %v", d, err)
	}
}

func TestHeadless(t *testing.T) {
	e := &gate.Evaluator{Approver: Headless{}}
	d, err := e.Decide(context.Background(), call("/ws", "make"))
	if !errors.Is(err, gate.ErrApprovalRequired) || d.Effect != rules.Deny {
		t.Fatalf("%+v %v", d, err)
	}
	if !strings.Contains(err.Error(), "command.execute make") {
		t.Errorf("error does not name the requirement: %v", err)
	}
}

func TestFunc(t *testing.T) {
	var seen []string
	e := &gate.Evaluator{Approver: Func(func(_ context.Context, req gate.Request) (gate.Answer, error) {
		for _, p := range req.Pending {
			seen = append(seen, p.Requirement.Target)
		}
		return gate.Answer{Verdict: gate.ApproveOnce}, nil
	})}
	d, err := e.Decide(context.Background(), call("/ws", "a | b"))
	if err != nil || d.Effect != rules.Allow || strings.Join(seen, ",") != "a,b" {
		t.Fatalf("%+v %v %v", d, err, seen)
	}
}

// hintKeys returns the keys the prompt's list of choices offers, "[y]"
// and so on.
func hintKeys(t *testing.T, shown string) []string {
	t.Helper()
	var keys []string
	for _, line := range strings.Split(shown, "\n") {
		if !strings.HasPrefix(line, "[") {
			continue
		}
		for _, f := range strings.Split(line, "[")[1:] {
			key, _, ok := strings.Cut(f, "]")
			if !ok {
				t.Fatalf("unreadable choices %q", line)
			}
			keys = append(keys, key)
		}
	}
	if len(keys) == 0 {
		t.Fatalf("the prompt lists no choices:\n%s", shown)
	}
	return keys
}

// TestTerminalChoices checks that what the prompt lists is what it
// accepts: every key it shows answers, and words it does not show (as
// "yes" or "always") are asked again.
func TestTerminalChoices(t *testing.T) {
	_, shown := terminal(t, &gate.Evaluator{}, "\n", "git push")
	keys := hintKeys(t, shown)
	want := map[string]gate.Verdict{"y": gate.ApproveOnce, "a": gate.ApproveAlways, "h": gate.ApproveFor, "n": gate.DenyOnce, "d": gate.DenyAlways}
	if len(keys) != len(want) {
		t.Errorf("the prompt lists %v, want %d choices", keys, len(want))
	}
	ask := func(typed string) (gate.Answer, string) {
		t.Helper()
		var out strings.Builder
		term := &Terminal{In: strings.NewReader(typed), Out: &out}
		ans, err := term.Approve(context.Background(), request("git push"))
		if err != nil {
			t.Fatalf("%q: %v", typed, err)
		}
		return ans, out.String()
	}
	for _, k := range keys {
		verdict, ok := want[k]
		if !ok {
			t.Errorf("the prompt lists [%s], which is no answer", k)
			continue
		}
		for _, typed := range []string{k, strings.ToUpper(k), " " + k + " "} {
			if ans, shown := ask(typed + "\n"); ans.Verdict != verdict {
				t.Errorf("%q: %v, want %v:\n%s", typed, ans.Verdict, verdict, shown)
			}
		}
	}
	if !strings.Contains(shown, "deny (or Enter)") {
		t.Errorf("the prompt does not say that Enter denies:\n%s", shown)
	}
	if ans, _ := ask("\n"); ans.Verdict != gate.DenyOnce {
		t.Errorf("Enter: %v, want deny", ans.Verdict)
	}
	retry := "answer " + strings.Join(keys[:len(keys)-1], ", ") + " or " + keys[len(keys)-1] + "\n"
	for _, typed := range []string{"yes", "o", "once", "always", "hour", "w", "while", "no", "deny", "never", "always deny", "ya", "y y"} {
		ans, shown := ask(typed + "\nn\n")
		if ans.Verdict != gate.DenyOnce || ans.Reason != "denied at the terminal" || !strings.Contains(shown, retry) {
			t.Errorf("%q, which the prompt does not list, was taken as %v (%q):\n%s", typed, ans.Verdict, ans.Reason, shown)
		}
	}
}

// request is what the gate asks about a "Bash" call of command in /ws
// that no rule decided.
func request(command string) gate.Request {
	var req gate.Request
	e := &gate.Evaluator{Approver: Func(func(_ context.Context, r gate.Request) (gate.Answer, error) {
		req = r
		return gate.Answer{}, nil
	})}
	e.Decide(context.Background(), call("/ws", command))
	return req
}

// TestTerminalSavesWhatItShows checks the prompt's promise: every answer
// saves exactly the rules the prompt said it would, and an answer whose
// rules the prompt said are none counts once.
func TestTerminalSavesWhatItShows(t *testing.T) {
	tests := []struct {
		name    string
		ask     string // an ask rule, if any
		command string
		// allow and deny are what the prompt must show "[a] and [h]" and
		// "[d]" save ("" for nothing).
		allow, deny string
	}{
		{"no rule", "", "git push", "allow Bash(git push)", "deny Bash(git push)"},
		// An allow rule would not stop the ask rule from asking, so
		// "always" saves none; a deny rule would stop it.
		{"ask rule", "Bash(git push)", "git push", "", "deny Bash(git push)"},
		{"ask rule and no rule", "Bash(git push)", "git push && make", "allow Bash(make)", "deny Bash(git push), deny Bash(make)"},
		{"not exact", "", "rm $X", "", ""},
	}
	for _, tt := range tests {
		for _, typed := range []string{"a", "h", "d"} {
			t.Run(tt.name+"/"+typed, func(t *testing.T) {
				ws := filepath.Join(t.TempDir(), "ws")
				e := &gate.Evaluator{Remember: &rules.Writer{Path: rules.LocalPath(ws)}}
				if tt.ask != "" {
					r, err := rules.NewRule(rules.Ask, tt.ask, rules.User, rules.Base{Root: ws, Cwd: ws, Home: ws})
					if err != nil {
						t.Fatal(err)
					}
					e.Rules = rules.NewSet([]*rules.Rule{r})
				}
				var out strings.Builder
				e.Approver = &Terminal{In: strings.NewReader(typed + "\n"), Out: &out}
				d, err := e.Decide(context.Background(), call(ws, tt.command))
				if err != nil {
					t.Fatal(err)
				}
				shown := out.String()
				promised, line, note := tt.allow, "  [a] and [h] save: ", "  [a] and [h] save no rule here: they approve once\n"
				if typed == "d" {
					promised, line, note = tt.deny, "  [d] saves: ", "  [d] saves no rule here: it denies once\n"
				}
				if promised != "" && !strings.Contains(shown, line+promised+"\n") {
					t.Errorf("the prompt does not show %q:\n%s", line+promised, shown)
				}
				if promised == "" && !strings.Contains(shown, note) {
					t.Errorf("the prompt does not say %q:\n%s", note, shown)
				}
				set, err := rules.Load(rules.Sources{Workspace: ws, Managed: "-", User: "-", NoClaude: true})
				if err != nil {
					t.Fatal(err)
				}
				var saved []string
				for _, r := range set.Rules() {
					saved = append(saved, string(r.Effect)+" "+r.Match)
				}
				if got := strings.Join(saved, ", "); got != promised {
					t.Errorf("%q saved %q; the prompt promised %q:\n%s", typed, got, promised, shown)
				}
				wantApproval := map[string]string{"a": "always", "h": "for 1h0m0s", "d": "always deny"}[typed]
				if promised == "" {
					wantApproval = map[string]string{"a": "once", "h": "once", "d": "deny"}[typed]
				}
				if d.Approval != wantApproval {
					t.Errorf("%q was recorded as %q, want %q", typed, d.Approval, wantApproval)
				}
			})
		}
	}
}

// TestTerminalReuse asks twice on one Terminal whose In is a stream: each
// prompt gets its own line, whether the lines were there before the first
// prompt or come one per prompt, and none is lost between prompts.
func TestTerminalReuse(t *testing.T) {
	t.Run("buffered", func(t *testing.T) {
		term := &Terminal{In: strings.NewReader("y\nd\r\n"), Out: io.Discard}
		for i, want := range []gate.Verdict{gate.ApproveOnce, gate.DenyAlways} {
			ans, err := term.Approve(context.Background(), request("git push"))
			if err != nil || ans.Verdict != want {
				t.Errorf("prompt %d: %v %v, want %v", i+1, ans.Verdict, err, want)
			}
		}
		if ans, _ := term.Approve(context.Background(), request("git push")); ans.Reason != "no answer" {
			t.Errorf("after the last line: %v (%q), want no answer", ans.Verdict, ans.Reason)
		}
	})
	t.Run("pipe", func(t *testing.T) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		defer w.Close()
		term := &Terminal{In: r, Out: io.Discard}
		for i, typed := range []string{"y\n", "d\n", "a\n"} {
			if _, err := w.WriteString(typed); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			ans, err := term.Approve(ctx, request("git push"))
			cancel()
			want := map[string]gate.Verdict{"y\n": gate.ApproveOnce, "d\n": gate.DenyAlways, "a\n": gate.ApproveAlways}[typed]
			if err != nil || ans.Verdict != want {
				t.Errorf("prompt %d, answered %q: %v (%q) %v, want %v", i+1, typed, ans.Verdict, ans.Reason, err, want)
			}
		}
	})
	t.Run("after a cancelled prompt", func(t *testing.T) {
		r, w := io.Pipe()
		defer w.Close()
		term := &Terminal{In: r, Out: io.Discard}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if ans, err := term.Approve(ctx, request("git push")); err != nil || ans.Reason != "the prompt was cancelled" {
			t.Fatalf("cancelled prompt: %v (%q) %v", ans.Verdict, ans.Reason, err)
		}
		go w.Write([]byte("a\n"))
		if ans, err := term.Approve(context.Background(), request("git push")); err != nil || ans.Verdict != gate.ApproveAlways {
			t.Errorf("the prompt after a cancelled one: %v (%q) %v, want always", ans.Verdict, ans.Reason, err)
		}
	})
}

// TestTerminalEscapes shows a request whose every part carries characters
// a terminal acts on or hides: none may reach Out as it is.
func TestTerminalEscapes(t *testing.T) {
	req := request("echo \x1b[H\x07 \u009b31m \x7f \u202egnp.exe \u2066x\u2069 \u200b \ufeff")
	req.Call.Tool = "Bash\x1b[2K"
	req.Call.Workspace = "/ws/\u202eevil"
	req.Pending[0].Why = "rule Bash(\x1b[1Agit) (user layer) asks for it\r"
	var out strings.Builder
	term := &Terminal{In: strings.NewReader("n\n"), Out: &out}
	if _, err := term.Approve(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	shown := out.String()
	for _, r := range shown {
		if r != '\n' && !unicode.IsPrint(r) {
			t.Errorf("the prompt shows %U as it is:\n%s", r, shown)
		}
	}
	for _, w := range []string{
		`airlock: "Bash\x1b[2K" call in "/ws/\u202eevil" needs your approval:`,
		`  command.execute "echo \x1b[H\a \u009b31m \x7f \u202egnp.exe \u2066x\u2069 \u200b \ufeff"` + "\n",
		`      "rule Bash(\x1b[1Agit) (user layer) asks for it\r"` + "\n",
		`  [a] and [h] save: allow "Bash(echo \x1b[H\a`,
		`  [d] saves: deny "Bash(echo \x1b[H\a`,
		"  (text in double quotes is escaped: it holds characters a terminal would act on or hide)\n",
	} {
		if !strings.Contains(shown, w) {
			t.Errorf("the prompt does not show %s:\n%s", w, shown)
		}
	}
}

func TestVisible(t *testing.T) {
	tests := []struct{ in, want string }{
		{"git push", "git push"},
		{`grep 'a\|b' "x y"`, `grep 'a\|b' "x y"`}, // nothing to escape: shown as it is
		{"café ünïcode 日本", "café ünïcode 日本"},
		{"a\tb", `"a\tb"`},
		{"a\nb", `"a\nb"`},
		{"\x1b[1A\x1b[2K\r", `"\x1b[1A\x1b[2K\r"`},
		{"del\x7f", `"del\x7f"`},
		{"c1 \u009b", `"c1 \u009b"`},
		{"\u202eevil", `"\u202eevil"`},
		{"\u2066isolate\u2069", `"\u2066isolate\u2069"`},
		{"zero\u200bwidth", `"zero\u200bwidth"`},
		{"no\u00a0break", `"no\u00a0break"`},
		{"line\u2028sep", `"line\u2028sep"`},
		{"bad \xff utf-8", `"bad \xff utf-8"`},
		{`quote " and \ with ESC` + "\x1b", `"quote \" and \\ with ESC\x1b"`},
	}
	for _, tt := range tests {
		if got, escaped := visible(tt.in); got != tt.want || escaped != (tt.in != tt.want) {
			t.Errorf("visible(%q) = %s, %v; want %s", tt.in, got, escaped, tt.want)
		}
	}
}

// hangUpMock is a terminal that hangs up after typed has been read: its
// next Read fails with err. A real hang-up fails a read with EIO only
// when the kernel's timing says so (TestTerminalPTYHangUp meets both of
// its ways at random); this makes each way happen on demand.
type hangUpMock struct {
	typed string
	err   error
}

func (m *hangUpMock) Read(p []byte) (int, error) {
	if m.typed == "" {
		return 0, m.err
	}
	n := copy(p, m.typed)
	m.typed = m.typed[n:]
	return n, nil
}

// TestTerminalHangUp checks that every way input ends is the same denial,
// and that a read that fails otherwise is an error.
func TestTerminalHangUp(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{"end of input", io.EOF},
		{"EIO", &os.PathError{Op: "read", Path: "/dev/tty", Err: syscall.EIO}},
		{"unexpected end", io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		for _, typed := range []string{"", "maybe\n", "y"} { // "y" is never entered
			term := &Terminal{In: &hangUpMock{typed: typed, err: tt.err}, Out: io.Discard}
			ans, err := term.Approve(context.Background(), request("git push"))
			if err != nil || ans.Verdict != gate.DenyOnce || ans.Reason != "no answer" {
				t.Errorf("%s after %q: %v (%q) %v, want deny (\"no answer\")", tt.name, typed, ans.Verdict, ans.Reason, err)
			}
		}
	}
	failed := errors.New("the disk is on fire")
	term := &Terminal{In: &hangUpMock{err: failed}, Out: io.Discard}
	if _, err := term.Approve(context.Background(), request("git push")); !errors.Is(err, failed) {
		t.Errorf("a failed read: %v, want an error wrapping %v", err, failed)
	}
}
