package approval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/airlockhq/airlock/gate"
	"github.com/airlockhq/airlock/rules"
)

// DefaultWhile is how long "always for a while" lasts when Terminal.While
// is zero.
const DefaultWhile = time.Hour

// Terminal asks a person on a terminal. One prompt is shown at a time.
//
// The prompt is written so that the call cannot put words in it: whatever
// comes from the call (tool, workspace, targets, reasons, rule text) and
// holds a character a terminal would act on or hide (control characters,
// bidirectional and other format characters) is shown quoted, with those
// characters escaped.
//
// When In is a terminal (it is when In and Out are nil), each prompt puts
// it in line mode with echo, since a full-screen program may have left it
// raw, discards what was typed before the question was shown, and puts
// back the mode it found when Approve returns. Any other In is read as a
// stream of lines, by one reader per Terminal that lasts as long as In
// does, so that consecutive prompts take consecutive lines and none is
// lost between them. A line ends with Enter (\n, \r or \r\n).
//
// The answers are the keys the prompt lists (y, a, h, n and d, in either
// case) and an empty line, which denies; anything else is asked again.
type Terminal struct {
	// In and Out are the terminal. When both are nil, /dev/tty is opened
	// for each prompt, so that the agent's own stdin and stdout are not
	// used; no terminal means gate.ErrApprovalRequired.
	In  io.Reader
	Out io.Writer
	// While is how long "always for a while" rules last; 0 means an hour.
	While time.Duration

	mu     sync.Mutex
	stream *streamInput // reads In when it is not a terminal
}

// maxTries is how many unreadable answers are tolerated before denying.
const maxTries = 3

// choice is one answer the prompt offers. The prompt lists every choice,
// and a line is an answer only if it is one of these keys (in either
// case, spaces around it ignored) or empty, which denies.
type choice struct {
	key     string
	label   string
	verdict gate.Verdict
}

var choices = []choice{
	{"y", "approve once", gate.ApproveOnce},
	{"a", "always for this workspace", gate.ApproveAlways},
	{"h", "always for", gate.ApproveFor}, // and how long
	{"n", "deny (or Enter)", gate.DenyOnce},
	{"d", "always deny", gate.DenyAlways},
}

// choose returns the choice line answers.
func choose(line string) (choice, bool) {
	key := strings.ToLower(strings.TrimSpace(line))
	if key == "" {
		key = "n"
	}
	for _, c := range choices {
		if c.key == key {
			return c, true
		}
	}
	return choice{}, false
}

// lineReader gives the lines typed at the prompt.
type lineReader interface {
	// readLine returns the next line, without its end. An error that
	// hungUp recognises means no line will come.
	readLine(ctx context.Context) (string, error)
}

// Approve shows the pending requirements and reads one answer. An answer
// that cannot be read (end of input, a terminal that hung up, a cancelled
// context) denies.
func (t *Terminal) Approve(ctx context.Context, req gate.Request) (ans gate.Answer, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	in, out := t.In, t.Out
	if in == nil && out == nil {
		f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
		if err != nil {
			return gate.Answer{}, fmt.Errorf("%w: no terminal to ask on (%v)", gate.ErrApprovalRequired, err)
		}
		defer f.Close()
		in, out = f, f
	}
	if in == nil || out == nil {
		return gate.Answer{}, errors.New("approval: Terminal needs both In and Out, or neither")
	}
	noAnswer := gate.Answer{Verdict: gate.DenyOnce, Reason: "no answer"}
	tty, err := startTTY(in)
	switch {
	case hungUp(err):
		return noAnswer, nil
	case err != nil:
		return gate.Answer{}, fmt.Errorf("approval: %w", err)
	}
	var lines lineReader
	if tty != nil {
		lines = tty
		defer func() {
			// A terminal left in the prompt's mode would garble the
			// program that owns it. That cannot undo a denial, but it
			// must not let an approval through unnoticed.
			if rerr := tty.restore(); rerr != nil && err == nil && approves(ans.Verdict) {
				ans, err = gate.Answer{}, fmt.Errorf("approval: %w", rerr)
			}
		}()
	} else {
		if t.stream == nil || t.stream.src != in {
			t.stream = newStreamInput(in)
		}
		lines = t.stream
	}

	while := t.While
	if while <= 0 {
		while = DefaultWhile
	}
	p := newPrompt(req, while)
	p.show(out)
	if tty != nil {
		// Keys typed before the question was shown are no answer to it.
		// They are discarded just before "> " appears, not after: a key
		// typed once it shows may be the answer.
		if err := tty.discardTyped(); hungUp(err) {
			fmt.Fprintln(out, "(no answer: denied)")
			return noAnswer, nil
		} else if err != nil {
			return gate.Answer{}, fmt.Errorf("approval: %w", err)
		}
	}
	for try := 0; try < maxTries; try++ {
		if try > 0 {
			fmt.Fprintln(out, p.retry())
		}
		fmt.Fprint(out, "> ")
		line, err := lines.readLine(ctx)
		switch {
		case ctx.Err() != nil:
			fmt.Fprintln(out, "\n(cancelled: denied)")
			return gate.Answer{Verdict: gate.DenyOnce, Reason: "the prompt was cancelled"}, nil
		case hungUp(err):
			fmt.Fprintln(out, "\n(no answer: denied)")
			return noAnswer, nil
		case err != nil:
			return gate.Answer{}, fmt.Errorf("approval: reading the answer: %w", err)
		}
		if c, ok := choose(line); ok {
			return p.answer(c), nil
		}
	}
	return gate.Answer{Verdict: gate.DenyOnce, Reason: "no valid answer"}, nil
}

// hungUp reports whether err means that no answer can come: the input
// ended, or the terminal hung up (which the kernel reports as the end of
// input or as EIO, depending on when the read notices).
func hungUp(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.EIO)
}

func approves(v gate.Verdict) bool {
	return v == gate.ApproveOnce || v == gate.ApproveAlways || v == gate.ApproveFor
}

// prompt is one question: what it shows, and what each answer saves.
type prompt struct {
	req   gate.Request
	while time.Duration
	// allow and deny are the rules that "always" (and "for a while") and
	// "always deny" make the gate save.
	allow, deny []string
}

func newPrompt(req gate.Request, while time.Duration) *prompt {
	return &prompt{req: req, while: while,
		allow: rulesToSave(req.Pending, rules.Allow),
		deny:  rulesToSave(req.Pending, rules.Deny)}
}

// rulesToSave returns the rules the gate saves when the answer for pending
// is "always" with effect. It follows gate.Evaluator's remember: one
// exact rule per savable requirement, except that no allow rule is saved
// for a requirement an ask rule sent here, since that rule would still
// ask. A deny rule is saved for it: it takes precedence over the ask rule.
func rulesToSave(pending []gate.Pending, effect rules.Effect) []string {
	var saved []string
	for _, p := range pending {
		if !p.Savable || effect == rules.Allow && p.Rule != "" {
			continue
		}
		if m, err := rules.ExactMatch(p.Requirement); err == nil {
			saved = append(saved, m)
		}
	}
	return saved
}

// show prints what is asked and exactly the rules each answer saves, so
// that nothing is ever saved that was not shown. "Always" answers save
// different rules ("always deny" saves one for a requirement an ask rule
// sent here, "always" does not), so each has its own list, computed as
// the gate saves (rulesToSave; TestTerminalSavesWhatItShows holds the two
// together). An answer whose list is empty counts once (see answer), and
// the prompt says so.
func (p *prompt) show(out io.Writer) {
	var b strings.Builder
	escaped := false
	show := func(s string) string {
		v, e := visible(s)
		escaped = escaped || e
		return v
	}
	fmt.Fprintf(&b, "\nairlock: %s call in %s needs your approval:\n", show(p.req.Call.Tool), show(p.req.Call.Workspace))
	for _, pd := range p.req.Pending {
		fmt.Fprintf(&b, "  %s %s\n      %s\n", show(pd.Requirement.Kind), show(pd.Requirement.Target), show(pd.Why))
	}
	list := func(effect rules.Effect, matches []string) string {
		shown := make([]string, len(matches))
		for i, m := range matches {
			shown[i] = string(effect) + " " + show(m)
		}
		return strings.Join(shown, ", ")
	}
	if len(p.allow) > 0 {
		fmt.Fprintf(&b, "  [a] and [h] save: %s\n", list(rules.Allow, p.allow))
	} else {
		fmt.Fprintln(&b, "  [a] and [h] save no rule here: they approve once")
	}
	if len(p.deny) > 0 {
		fmt.Fprintf(&b, "  [d] saves: %s\n", list(rules.Deny, p.deny))
	} else {
		fmt.Fprintln(&b, "  [d] saves no rule here: it denies once")
	}
	if escaped {
		fmt.Fprintln(&b, "  (text in double quotes is escaped: it holds characters a terminal would act on or hide)")
	}
	for i, c := range choices {
		if i > 0 {
			b.WriteString("  ")
		}
		fmt.Fprintf(&b, "[%s] %s", c.key, c.label)
		if c.verdict == gate.ApproveFor {
			fmt.Fprintf(&b, " %s", p.while)
		}
	}
	b.WriteString("\n")
	io.WriteString(out, b.String())
}

// retry is what is shown after a line that is no answer.
func (p *prompt) retry() string {
	keys := make([]string, len(choices))
	for i, c := range choices {
		keys[i] = c.key
	}
	return "answer " + strings.Join(keys[:len(keys)-1], ", ") + " or " + keys[len(keys)-1]
}

// answer is the gate's answer for c. An "always" that the prompt showed
// saves no rule is answered once, so that the decision records what
// happened.
func (p *prompt) answer(c choice) gate.Answer {
	switch c.verdict {
	case gate.ApproveOnce:
		return gate.Answer{Verdict: gate.ApproveOnce}
	case gate.ApproveAlways, gate.ApproveFor:
		if len(p.allow) == 0 {
			return gate.Answer{Verdict: gate.ApproveOnce}
		}
		if c.verdict == gate.ApproveFor {
			return gate.Answer{Verdict: gate.ApproveFor, For: p.while}
		}
		return gate.Answer{Verdict: gate.ApproveAlways}
	case gate.DenyAlways:
		if len(p.deny) > 0 {
			return gate.Answer{Verdict: gate.DenyAlways, Reason: "always denied at the terminal"}
		}
	}
	return gate.Answer{Verdict: gate.DenyOnce, Reason: "denied at the terminal"}
}
