package approval

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/airlockhq/airlock/gate"
	"github.com/airlockhq/airlock/rules"
)

// DefaultWhile is how long "always for a while" lasts when Terminal.While
// is zero.
const DefaultWhile = time.Hour

// Terminal asks a person on a terminal. One prompt is shown at a time.
type Terminal struct {
	// In and Out are the terminal. When both are nil, /dev/tty is opened
	// for each prompt, so that the agent's own stdin and stdout are not
	// used; no terminal means gate.ErrApprovalRequired.
	In  io.Reader
	Out io.Writer
	// While is how long "always for a while" rules last; 0 means an hour.
	While time.Duration

	mu sync.Mutex
}

// maxTries is how many unreadable answers are tolerated before denying.
const maxTries = 3

// Approve shows the pending requirements and reads one answer. An answer
// that cannot be read (end of input, cancelled context) denies.
func (t *Terminal) Approve(ctx context.Context, req gate.Request) (gate.Answer, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	in, out := t.In, t.Out
	if in == nil && out == nil {
		tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
		if err != nil {
			return gate.Answer{}, fmt.Errorf("%w: no terminal to ask on (%v)", gate.ErrApprovalRequired, err)
		}
		defer tty.Close()
		in, out = tty, tty
	}
	if in == nil || out == nil {
		return gate.Answer{}, errors.New("approval: Terminal needs both In and Out, or neither")
	}
	while := t.While
	if while <= 0 {
		while = DefaultWhile
	}
	t.show(out, req, while)
	lines := make(chan string)
	readErr := make(chan error, 1)
	done := make(chan struct{})
	defer close(done) // the reader stops at its next line
	go func() {
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-done:
				return
			}
		}
		readErr <- sc.Err()
	}()
	for try := 0; try < maxTries; try++ {
		fmt.Fprint(out, "> ")
		var line string
		select {
		case <-ctx.Done():
			fmt.Fprintln(out, "\n(cancelled: denied)")
			return gate.Answer{Verdict: gate.DenyOnce, Reason: "the prompt was cancelled"}, nil
		case err := <-readErr:
			fmt.Fprintln(out, "\n(no answer: denied)")
			if err != nil {
				return gate.Answer{}, fmt.Errorf("approval: reading the answer: %w", err)
			}
			return gate.Answer{Verdict: gate.DenyOnce, Reason: "no answer"}, nil
		case line = <-lines:
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes", "o", "once":
			return gate.Answer{Verdict: gate.ApproveOnce}, nil
		case "a", "always":
			return gate.Answer{Verdict: gate.ApproveAlways}, nil
		case "h", "hour", "w", "while":
			return gate.Answer{Verdict: gate.ApproveFor, For: while}, nil
		case "n", "no", "deny", "":
			return gate.Answer{Verdict: gate.DenyOnce, Reason: "denied at the terminal"}, nil
		case "d", "never", "always deny":
			return gate.Answer{Verdict: gate.DenyAlways, Reason: "always denied at the terminal"}, nil
		}
		fmt.Fprintln(out, "answer y, a, h, n or d")
	}
	return gate.Answer{Verdict: gate.DenyOnce, Reason: "no valid answer"}, nil
}

// show prints what is asked, and exactly which rules an "always" answer
// would save, so that nothing broader than what is shown is ever saved.
func (t *Terminal) show(out io.Writer, req gate.Request, while time.Duration) {
	fmt.Fprintf(out, "\nairlock: %s call in %s needs your approval:\n", req.Call.Tool, req.Call.Workspace)
	var save []string
	for _, p := range req.Pending {
		fmt.Fprintf(out, "  %s %s\n      %s\n", p.Requirement.Kind, p.Requirement.Target, p.Why)
		if m, err := rules.ExactMatch(p.Requirement); err == nil && p.Savable && p.Rule == "" {
			save = append(save, m)
		}
	}
	if len(save) > 0 {
		fmt.Fprintf(out, "  \"always\" saves: %s\n", strings.Join(save, ", "))
	} else {
		fmt.Fprintln(out, "  (nothing here can be saved as a rule: \"always\" counts once)")
	}
	fmt.Fprintf(out, "[y] approve once  [a] always for this workspace  [h] always for %s  [n] deny  [d] always deny\n", while)
}
