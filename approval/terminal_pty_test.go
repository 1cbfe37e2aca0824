//go:build linux

package approval

// The tests of Terminal on a real pseudo-terminal. pty_harness_test.go
// runs them: the child process whose controlling terminal is the pty, and
// the master side the tests type on and read from.

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airlockhq/airlock/gate"
	"github.com/airlockhq/airlock/rules"
)

// promptEnd is how the question ends: the choices, then where to type.
var promptEnd = fmt.Sprintf("[y] approve once  [a] always for this workspace  [h] always for %s  [n] deny (or Enter)  [d] always deny\n> ", DefaultWhile)

// retryPrompt is shown after an answer that cannot be read.
const retryPrompt = "answer y, a, h, n or d\n> "

// checkPrompt checks that the first prompt shows what the request
// carried: the tool, the workspace, every pending requirement and the
// rules "always" and "always deny" would save.
func checkPrompt(t *testing.T, prompt, ws string, r ptyResult) {
	t.Helper()
	want := []string{
		fmt.Sprintf("airlock: Bash call in %s needs your approval:\n", ws),
		"  command.execute " + ptyCommand + "\n",
		"  [a] and [h] save: allow Bash(" + ptyCommand + ")\n",
		"  [d] saves: deny Bash(" + ptyCommand + ")\n",
	}
	if len(r.Pending) == 0 {
		t.Errorf("the request carried no pending requirement")
	}
	for _, p := range r.Pending {
		want = append(want, "  "+p+"\n")
	}
	for _, w := range want {
		if !strings.Contains(prompt, w) {
			t.Errorf("the prompt does not show %q:\n%s", w, prompt)
		}
	}
}

// ptyModes are the modes a terminal is in when a prompt comes: cooked, as
// a shell leaves it, and raw, as a full-screen program such as Claude Code
// leaves it (no line editing, no echo, Enter sends \r).
var ptyModes = []struct {
	name string
	raw  bool
}{{"cooked", false}, {"raw", true}}

func TestTerminalPTYAnswers(t *testing.T) {
	const (
		once   = ""
		always = "allow Bash(" + ptyCommand + ")"
		while  = "allow Bash(" + ptyCommand + ") (expires)"
		never  = "deny Bash(" + ptyCommand + ")"
	)
	tests := []struct {
		name string
		// keys are typed one after another, each at a "> " prompt.
		keys     []string
		verdict  gate.Verdict
		reason   string
		effect   rules.Effect
		approval string
		saved    string
	}{
		{"y", []string{"y\r"}, gate.ApproveOnce, "", rules.Allow, "once", once},
		{"upper case", []string{"Y\r"}, gate.ApproveOnce, "", rules.Allow, "once", once},
		{"line feed", []string{"y\n"}, gate.ApproveOnce, "", rules.Allow, "once", once},
		{"a", []string{"a\r"}, gate.ApproveAlways, "", rules.Allow, "always", always},
		{"spaces", []string{"  A \r"}, gate.ApproveAlways, "", rules.Allow, "always", always},
		{"h", []string{"h\r"}, gate.ApproveFor, "", rules.Allow, "for 1h0m0s", while},
		{"n", []string{"n\r"}, gate.DenyOnce, "denied at the terminal", rules.Deny, "deny", once},
		{"enter", []string{"\r"}, gate.DenyOnce, "denied at the terminal", rules.Deny, "deny", once},
		{"d", []string{"d\r"}, gate.DenyAlways, "always denied at the terminal", rules.Deny, "always deny", never},
		{"line edited", []string{"n\x7fa\r"}, gate.ApproveAlways, "", rules.Allow, "always", always}, // n, backspace, a
		// Only what the prompt shows is an answer.
		{"yes is not shown", []string{"yes\r", "y\r"}, gate.ApproveOnce, "", rules.Allow, "once", once},
		{"always is not shown", []string{"always\r", "n\r"}, gate.DenyOnce, "denied at the terminal", rules.Deny, "deny", once},
		{"unreadable then a", []string{"ja\r", "a\r"}, gate.ApproveAlways, "", rules.Allow, "always", always},
		{"unreadable thrice", []string{"x\r", "yy\r", "nope\r"}, gate.DenyOnce, "no valid answer", rules.Deny, "deny", once},
		{"end of input", []string{"\x04"}, gate.DenyOnce, "no answer", rules.Deny, "deny", once}, // Ctrl-D
	}
	for _, mode := range ptyModes {
		for _, tt := range tests {
			t.Run(mode.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				s := startOnPTY(t, ptySpec{Raw: mode.raw}, true, "")
				prompt := s.expect(promptEnd)
				for i, k := range tt.keys {
					if i > 0 {
						s.expect(retryPrompt)
					}
					s.typeKeys(k)
				}
				start := time.Now()
				r := s.wait()
				checkPrompt(t, prompt, s.ws, r)
				if r.Err != "" {
					t.Fatalf("Approve: %s; the terminal showed:\n%s", r.Err, s.shown.String())
				}
				if r.Verdict != tt.verdict || r.Reason != tt.reason {
					t.Errorf("verdict %v (%q), want %v (%q); the terminal showed:\n%s",
						r.Verdict, r.Reason, tt.verdict, tt.reason, s.shown.String())
				}
				if tt.verdict == gate.ApproveFor && r.For != DefaultWhile {
					t.Errorf("approved for %v, want %v", r.For, DefaultWhile)
				}
				if r.Effect != tt.effect || r.Approval != tt.approval {
					t.Errorf("decision %s %q, want %s %q", r.Effect, r.Approval, tt.effect, tt.approval)
				}
				saved, expires := savedRules(t, s.ws)
				if saved != tt.saved {
					t.Errorf("local rules %q, want %q", saved, tt.saved)
				}
				if tt.verdict == gate.ApproveFor {
					// Rules expire on the second, DefaultWhile after the answer.
					lo, hi := start.Add(DefaultWhile-ptyTimeout), time.Now().Add(DefaultWhile+time.Second)
					if expires.Before(lo) || expires.After(hi) {
						t.Errorf("the rule expires at %v, want about %v from now", expires, DefaultWhile)
					}
				}
				if n := strings.Count(s.shown.String(), "> "); n != len(tt.keys) {
					t.Errorf("asked %d times for %d answers:\n%s", n, len(tt.keys), s.shown.String())
				}
				// The person sees what they type, whatever mode the
				// terminal was in.
				if typed := strings.TrimRight(tt.keys[0], "\r\n"); isPrintable(typed) && !strings.Contains(s.shown.String(), "> "+typed+"\n") {
					t.Errorf("%q was not echoed:\n%s", typed, s.shown.String())
				}
				if !r.ModeKept {
					t.Errorf("the terminal's mode changed across Approve (%s)", r.ModeErr)
				}
			})
		}
	}
}

// isPrintable reports whether s is printable ASCII.
func isPrintable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// TestTerminalPTYTypeAhead types "y" and Enter before the prompt shows:
// that answers nothing, since the person had not seen the question. The
// answer is the one typed at the prompt.
func TestTerminalPTYTypeAhead(t *testing.T) {
	for _, mode := range ptyModes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			s := startOnPTY(t, ptySpec{Raw: mode.raw, TypeAhead: len("y\r")}, true, "")
			s.expect(ptyReady)
			s.typeKeys("y\r")
			prompt := s.expect(promptEnd)
			s.typeKeys("n\r")
			r := s.wait()
			checkPrompt(t, prompt, s.ws, r)
			if r.Err != "" || r.Verdict != gate.DenyOnce || r.Reason != "denied at the terminal" {
				t.Errorf("verdict %v (%q, %q), want the deny typed at the prompt; the terminal showed:\n%s",
					r.Verdict, r.Reason, r.Err, s.shown.String())
			}
			if !r.ModeKept {
				t.Errorf("the terminal's mode changed across Approve (%s)", r.ModeErr)
			}
		})
	}
}

// TestTerminalPTYRaw asks on a terminal left in raw mode, as Claude Code
// leaves it: the person's "a" and Enter (\r) must answer, be echoed, and
// the terminal must be raw again when Approve returns.
func TestTerminalPTYRaw(t *testing.T) {
	s := startOnPTY(t, ptySpec{Raw: true}, true, "")
	prompt := s.expect(promptEnd)
	s.typeKeys("a\r")
	r := s.wait()
	checkPrompt(t, prompt, s.ws, r)
	if r.Err != "" || r.Verdict != gate.ApproveAlways {
		t.Errorf("verdict %v (%q), want always; the terminal showed:\n%s", r.Verdict, r.Err, s.shown.String())
	}
	if !strings.Contains(s.shown.String(), "> a\n") {
		t.Errorf("the answer was not echoed:\n%s", s.shown.String())
	}
	if !r.ModeKept {
		t.Errorf("the terminal is not raw again after Approve (%s)", r.ModeErr)
	}
	if saved, _ := savedRules(t, s.ws); saved != "allow Bash("+ptyCommand+")" {
		t.Errorf("local rules %q", saved)
	}
}

// TestTerminalPTYCancel cancels the prompt on a raw terminal: the terminal
// is raw again, and nothing of Approve is left reading it, so the next key
// goes to the program.
func TestTerminalPTYCancel(t *testing.T) {
	s := startOnPTY(t, ptySpec{Raw: true, Cancel: 200 * time.Millisecond, ReadAfter: 1}, true, "")
	s.expect(promptEnd)
	s.expect("(cancelled: denied)\n")
	s.expect(ptyReturned)
	s.typeKeys("z")
	r := s.wait()
	if r.Err != "" || r.Verdict != gate.DenyOnce || r.Reason != "the prompt was cancelled" {
		t.Errorf("verdict %v (%q, %q), want a cancelled deny", r.Verdict, r.Reason, r.Err)
	}
	if !r.ModeKept {
		t.Errorf("the terminal is not raw again after a cancelled prompt (%s)", r.ModeErr)
	}
	if r.ReadAfter != "z" {
		t.Errorf("the program read %q after Approve, want the key typed then", r.ReadAfter)
	}
}

// TestTerminalPTYEscapes asks about a command that holds escape sequences
// and a right-to-left override, which, shown as they are, would move the
// cursor, erase the prompt's lines and reorder the text. The terminal must
// never receive them: the prompt shows them escaped.
func TestTerminalPTYEscapes(t *testing.T) {
	const command = "echo ok\x1b[1A\x1b[2K\rrm -rf ~ \u202eevil"
	s := startOnPTY(t, ptySpec{Command: command}, true, "")
	prompt := s.expect(promptEnd)
	s.typeKeys("n\r")
	r := s.wait()
	if r.Err != "" || r.Verdict != gate.DenyOnce {
		t.Errorf("verdict %v (%q)", r.Verdict, r.Err)
	}
	for _, w := range []string{
		`  command.execute "echo ok\x1b[1A\x1b[2K rm -rf `,
		` \u202eevil"` + "\n",
		`  [a] and [h] save: allow "Bash(echo ok\x1b[1A\x1b[2K rm -rf `,
		"  (text in double quotes is escaped:",
	} {
		if !strings.Contains(prompt, w) {
			t.Errorf("the prompt does not show %q:\n%s", w, prompt)
		}
	}
	if raw := s.raw.String(); strings.ContainsAny(raw, "\x1b\u202e") {
		t.Errorf("the terminal received the command's escape sequences: %q", raw)
	}
}

// TestTerminalPTYNotStdio runs the child as an agent runs a hook: its
// stdin carries the agent's input, not the person's, and the terminal is
// only its controlling terminal. Terminal must ask on /dev/tty and never
// take an answer from stdin.
func TestTerminalPTYNotStdio(t *testing.T) {
	s := startOnPTY(t, ptySpec{}, false, "y\ny\ny\n")
	prompt := s.expect(promptEnd)
	s.typeKeys("n\r")
	r := s.wait()
	checkPrompt(t, prompt, s.ws, r)
	if r.Err != "" || r.Verdict != gate.DenyOnce || r.Effect != rules.Deny {
		t.Errorf("verdict %v %q, decision %s; want the terminal's deny", r.Verdict, r.Err, r.Effect)
	}
}

// TestTerminalPTYHangUp closes the terminal while the prompt waits: the
// child must deny, not wait for an answer that cannot come. The kernel
// lets the waiting read see the hang-up in two ways (end of input, or EIO
// when the master's close wakes it before the slave is hung up); both are
// the same answer: a denial for "no answer".
func TestTerminalPTYHangUp(t *testing.T) {
	for _, mode := range ptyModes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			s := startOnPTY(t, ptySpec{Raw: mode.raw, HangUp: true}, true, "")
			s.expect(promptEnd)
			s.hangUp()
			r := s.wait()
			if !r.Hangup {
				t.Errorf("the child saw no SIGHUP: the terminal did not hang up")
			}
			if r.Err != "" || r.Verdict != gate.DenyOnce || r.Reason != "no answer" {
				t.Errorf("after a hang-up: verdict %v (%q, error %q), want deny (\"no answer\")", r.Verdict, r.Reason, r.Err)
			}
			if r.Effect != rules.Deny || r.Approval != "deny" {
				t.Errorf("after a hang-up the decision is %s %q, want deny", r.Effect, r.Approval)
			}
			if saved, _ := savedRules(t, s.ws); saved != "" {
				t.Errorf("a hang-up saved rules: %s", saved)
			}
		})
	}
}

// TestTerminalPTYNoTerminal runs the child with no controlling terminal:
// no one can be asked, which is gate.ErrApprovalRequired.
func TestTerminalPTYNoTerminal(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "ws")
	cmd := exec.Command(testBinary(t))
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out // stdin is /dev/null
	// A new session, so that the child cannot inherit the controlling
	// terminal that go test may have; no Setctty, so it gets none.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	result := startChild(t, ptySpec{NoTTY: true}, ws, cmd)
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	r := waitChild(t, cmd, result, out.String)
	if !r.ApprovalRequired || !strings.Contains(r.Err, "no terminal to ask on") {
		t.Errorf("Approve without a terminal: %q, want an error wrapping gate.ErrApprovalRequired", r.Err)
	}
	if r.Effect != rules.Deny {
		t.Errorf("decision %s, want deny", r.Effect)
	}
	if out.Len() > 0 {
		t.Errorf("the child wrote to stdout or stderr:\n%s", out.String())
	}
}
