package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airlockhq/airlock/audit"
	"github.com/airlockhq/airlock/grant"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/tool"
)

// Recorder receives every decision; *audit.Log implements it. A nil
// Recorder records nothing.
type Recorder interface {
	Append(audit.Event) error
}

// ProfileAccess is what the gate reads of a profile in step 1: the access
// it gives one requirement, and its fingerprint for grants and the audit.
// *profile.Profile implements it.
type ProfileAccess interface {
	Access(kind, target string) profile.Access
	Fingerprint() string
}

// DefaultGrantTTL is how long a grant lasts when Evaluator.GrantTTL is 0.
const DefaultGrantTTL = 5 * time.Minute

// Evaluator decides tool calls. Set its fields before the first Decide and
// do not change them after; Decide is safe for concurrent use.
type Evaluator struct {
	// Profile gives step 1's access. Nil means every requirement is
	// Gated: only rules and the approver decide.
	Profile ProfileAccess
	// Rules are the loaded rules of every layer; nil means none.
	Rules *rules.Set
	// Approver answers what no rule decided. Nil means the Decision is
	// "ask" and the caller asks (Claude Code's hook does).
	Approver Approver
	// Remember, when set, is where "always" answers are saved (the local
	// layer's file). Nil makes "always" answers count once.
	Remember *rules.Writer
	// Recorder receives every decision; nil records nothing.
	Recorder Recorder
	// Issuer mints grants for allowed Gated requirements. Nil mints none;
	// so does a call with no ExecutionID.
	Issuer *grant.Issuer
	// GrantTTL is how long grants last; 0 means DefaultGrantTTL.
	GrantTTL time.Duration
	// Preparers derive requirements; nil means tool.Builtin().
	Preparers tool.Preparers
	// Now is the clock for rule expiry; nil means time.Now.
	Now func() time.Time
	// Sandbox, when set, is the sandbox the commands of some calls run
	// in, under Profile; the gate leaves to it what it enforces. Nil
	// means no call runs confined.
	Sandbox *Confinement

	mu      sync.Mutex
	learned atomic.Pointer[rules.Set] // rules saved by "always" answers
}

func (e *Evaluator) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Evaluator) fingerprint() string {
	if e.Profile == nil {
		return ""
	}
	return e.Profile.Fingerprint()
}

// match returns the strongest rule of effect matching r, in the loaded
// rules or the rules learned from answers.
func (e *Evaluator) match(effect rules.Effect, r tool.Requirement, now time.Time) *rules.Rule {
	return e.matchUnless(effect, r, now, nil)
}

// matchUnless is match passing over the rules skip reports.
func (e *Evaluator) matchUnless(effect rules.Effect, r tool.Requirement, now time.Time, skip func(*rules.Rule) bool) *rules.Rule {
	if rule := e.Rules.MatchUnless(effect, r, now, skip); rule != nil {
		return rule
	}
	return e.learned.Load().MatchUnless(effect, r, now, skip)
}

// autoAllows reports whether the profile lets a confined call's commands
// run without a prompt: auto_allow_in_sandbox on, or not set at all (a
// profile that sets it to false asks for everything).
func (e *Evaluator) autoAllows() bool {
	aa, ok := e.Profile.(interface{ AutoAllowInSandbox() (on, set bool) })
	if !ok {
		return false
	}
	on, set := aa.AutoAllowInSandbox()
	return on || !set
}

// namedPaths is what the gate asks a profile about a path's other names
// (*profile.Profile has it).
type namedPaths interface {
	Denied(path string) bool
	IsProtected(path string) bool
}

// access is step 1 for one requirement; auto says the call runs in the
// sandbox of e.Sandbox with auto_allow_in_sandbox on (autoAllows).
func (e *Evaluator) access(r tool.Requirement, auto bool) profile.Access {
	if r.Unresolved {
		if auto && r.Kind == tool.KindFilesystemRead {
			// What the path turns out to be when the shell runs, the
			// sandbox's read boundary and masks judge.
			return profile.AccessAllow
		}
		// The profile cannot judge a path nobody knows yet.
		return profile.AccessGated
	}
	a := profile.AccessGated
	if e.Profile != nil {
		a = e.Profile.Access(r.Kind, r.Target)
	}
	if auto && a == profile.AccessGated && r.Kind == tool.KindCommandExecute {
		// Where every command runs in the sandbox, one no rule
		// mentions needs no prompt; deny and ask rules still apply.
		a = profile.AccessAllow
	}
	// The names the call used hold the profile's deny entries and
	// protected paths too: .git/hooks as a symlink to a plain directory
	// is still where git looks for hooks.
	if pp, ok := e.Profile.(namedPaths); ok && a != profile.AccessDeny && (r.Kind == tool.KindFilesystemRead || r.Kind == tool.KindFilesystemWrite) {
		for _, n := range r.Names {
			if pp.Denied(n) {
				return profile.AccessDeny
			}
			if a == profile.AccessAllow && r.Kind == tool.KindFilesystemWrite && pp.IsProtected(n) {
				a = profile.AccessGated
			}
		}
	}
	if a == profile.AccessAllow && r.Unparsed {
		a = profile.AccessGated
	}
	return a
}

// Decide decides call. The Decision is always usable: whenever err is not
// nil the Decision is a denial saying why (an unknown tool, no approver in
// headless mode, an approver, writer, grant or audit failure), so a caller
// that only looks at Decision.Effect fails closed.
func (e *Evaluator) Decide(ctx context.Context, call tool.Call) (Decision, error) {
	d, err := e.decide(ctx, call)
	if d.Effect != rules.Deny {
		d.Reason += unseenNote(d.Requirements)
	}
	if recErr := e.record(call, d); recErr != nil {
		d = Decision{
			Effect: rules.Deny, Layer: LayerAudit, Requirements: d.Requirements,
			Reason: "the decision could not be written to the audit log: " + recErr.Error(),
		}
		err = errors.Join(err, recErr)
	}
	return d, err
}

func (e *Evaluator) decide(ctx context.Context, call tool.Call) (Decision, error) {
	now := e.now()
	var reqs []tool.Requirement
	var err error
	if e.Preparers != nil {
		reqs, err = e.Preparers.Prepare(call)
	} else {
		reqs, err = tool.Prepare(call)
	}
	if err != nil {
		return Decision{Effect: rules.Deny, Layer: LayerTool, Reason: err.Error(), Requirements: []Step{}}, err
	}
	steps := make([]Step, len(reqs))
	for i, r := range reqs {
		steps[i] = Step{Requirement: r}
	}
	deny := func(i int, reason, rule, layer, source string) Decision {
		steps[i].Effect, steps[i].Rule, steps[i].Layer = rules.Deny, rule, layer
		r := reqs[i]
		return Decision{Effect: rules.Deny, Reason: reason, Requirement: &r, Rule: rule, Layer: layer, Source: source, Requirements: steps}
	}

	// 0. What cannot be judged at all (a host that fails normalisation,
	// a path with a control character) is refused.
	for i, r := range reqs {
		if r.Invalid != "" {
			return deny(i, fmt.Sprintf("%s %q is refused: %s", r.Kind, r.Target, r.Invalid), "", LayerTool, ""), nil
		}
	}
	// 1. The profile.
	confined := e.Sandbox.runs(call.Tool)
	auto := confined && e.autoAllows()
	access := make([]profile.Access, len(reqs))
	for i, r := range reqs {
		access[i] = e.access(r, auto)
		if access[i] == profile.AccessAllow && r.Tree && r.Kind == tool.KindFilesystemWrite {
			// A write of a whole tree changes the protected paths in it.
			if pp, ok := e.Profile.(interface{ ProtectedBeneath(string) bool }); ok && pp.ProtectedBeneath(r.Target) {
				access[i] = profile.AccessGated
			}
		}
		steps[i].Access = access[i].String()
	}
	// ruleDeny is the denial a deny rule gives r.
	ruleDeny := func(i int, r tool.Requirement, rule *rules.Rule) Decision {
		reason := rule.Reason
		if reason == "" {
			reason = fmt.Sprintf("denied by rule %s (%s layer)", rule.Match, rule.Layer)
		}
		if r.Tree && treeOnly(rule, r) {
			verb := "reads"
			if r.Kind == tool.KindFilesystemWrite {
				verb = "changes"
			}
			reason += fmt.Sprintf("; the call %s everything beneath %s, where the rule applies: name a narrower path", verb, r.Target)
		}
		return deny(i, reason, rule.Match, string(rule.Layer), rule.Where())
	}
	for i, r := range reqs {
		if access[i] == profile.AccessDeny {
			// The workspace's deny rules are compiled into its profile
			// (package workspace): the rule, with its reason, says why.
			if rule := e.match(rules.Deny, r, now); rule != nil {
				return ruleDeny(i, r, rule), nil
			}
			return deny(i, fmt.Sprintf("the profile does not allow %s %s", r.Kind, r.Target), "", LayerProfile, ""), nil
		}
	}
	// A read of a whole tree sees what the profile's deny entries hide
	// beneath it; outside the sandbox (Claude Code's own Grep, Glob)
	// nothing else hides it. Inside, the masks hide those files, files
	// created there later included, so the read shows the rest.
	if tp, ok := e.Profile.(interface{ DeniedBeneath(string) string }); ok && !confined {
		for i, r := range reqs {
			if !r.Tree || r.Kind != tool.KindFilesystemRead || r.Unresolved {
				continue
			}
			if g := tp.DeniedBeneath(r.Target); g != "" {
				steps[i].Access = profile.AccessDeny.String()
				if rule := e.match(rules.Deny, r, now); rule != nil {
					d := ruleDeny(i, r, rule)
					d.Reason += e.narrower(call.Tool, call.Workspace, r.Target, now)
					return d, nil
				}
				return deny(i, fmt.Sprintf("the profile denies %s, which a read of everything beneath %s would include: name a narrower path", g, r.Target)+e.narrower(call.Tool, call.Workspace, r.Target, now), "", LayerProfile, ""), nil
			}
		}
	}
	// 2. Deny rules, in every layer, whatever the profile said. For a
	// read that runs confined, of a whole tree or of a path only the
	// running shell knows, a rule about what lies beneath the tree (or
	// what the path may be) that the sandbox masks is the sandbox's to
	// enforce: the read shows the rest, never the masked files.
	for i, r := range reqs {
		var skip func(*rules.Rule) bool
		if confined && r.Kind == tool.KindFilesystemRead && (r.Tree || r.Unresolved) {
			skip = func(rule *rules.Rule) bool {
				return e.Sandbox.masks(rule) && (r.Unresolved || treeOnly(rule, r))
			}
		}
		if rule := e.matchUnless(rules.Deny, r, now, skip); rule != nil {
			d := ruleDeny(i, r, rule)
			if r.Tree && r.Kind == tool.KindFilesystemRead && treeOnly(rule, r) {
				d.Reason += e.narrower(call.Tool, call.Workspace, r.Target, now)
			}
			return d, nil
		}
	}
	// 3 and 4. Ask rules, then allow rules.
	var pending []Pending
	firstAllowed := -1
	var allowRule *rules.Rule
	for i, r := range reqs {
		if rule := e.match(rules.Ask, r, now); rule != nil {
			steps[i].Effect, steps[i].Rule, steps[i].Layer = rules.Ask, rule.Match, string(rule.Layer)
			pending = append(pending, Pending{Requirement: r, Rule: rule.Match, Layer: string(rule.Layer),
				Why: fmt.Sprintf("rule %s (%s layer) asks for it", rule.Match, rule.Layer), Savable: r.Exact()})
			continue
		}
		if access[i] == profile.AccessAllow {
			steps[i].Effect, steps[i].Layer = rules.Allow, LayerProfile
			continue
		}
		if rule := e.match(rules.Allow, r, now); rule != nil {
			steps[i].Effect, steps[i].Rule, steps[i].Layer = rules.Allow, rule.Match, string(rule.Layer)
			if firstAllowed < 0 {
				firstAllowed, allowRule = i, rule
			}
			continue
		}
		why := "no rule allows it"
		switch {
		case r.Unparsed:
			why = "the shell parser could not read it, so no rule can allow it"
		case r.Unresolved && r.Kind == tool.KindCommandExecute:
			why = "the command is only known when the shell runs, so no rule can allow it"
		case r.Unresolved && r.Kind == tool.KindNetworkConnect:
			why = "its host is only known when the shell runs, so no rule can allow it"
		case r.Unresolved && r.Tool != "Bash" && r.Shape != "":
			why = "its path holds glob or brace characters, which the tool does not expand, so no rule can allow it"
		case r.Unresolved:
			why = "its path depends on what only the running shell knows, so no rule can allow it"
		case r.Shape != "":
			why = "no rule allows it (parts of it are only known when it runs)"
		}
		steps[i].Effect = rules.Ask
		pending = append(pending, Pending{Requirement: r, Why: why, Savable: r.Exact()})
	}

	if len(pending) == 0 {
		d := Decision{Effect: rules.Allow, Requirements: steps}
		switch {
		case len(reqs) == 0:
			d.Reason = "the call needs nothing the gate decides"
		case firstAllowed >= 0:
			r := reqs[firstAllowed]
			d.Requirement, d.Rule, d.Layer, d.Source = &r, allowRule.Match, string(allowRule.Layer), allowRule.Where()
			d.Reason = fmt.Sprintf("allowed by rule %s (%s layer)", allowRule.Match, allowRule.Layer)
		default:
			r := reqs[0]
			d.Requirement, d.Layer = &r, LayerProfile
			d.Reason = "the profile allows every requirement"
		}
		return e.withGrants(call, d, access)
	}

	// 5. Someone must answer.
	// The requirement an ask rule sent here says more than one no rule
	// covers, so it is the one the decision names.
	first := pending[0]
	for _, p := range pending {
		if p.Rule != "" {
			first = p
			break
		}
	}
	d := Decision{Effect: rules.Ask, Requirement: &first.Requirement, Rule: first.Rule, Layer: first.Layer, Requirements: steps}
	d.Reason = fmt.Sprintf("%s %s needs approval: %s", first.Requirement.Kind, first.Requirement.Target, first.Why)
	if e.Approver == nil {
		return d, nil
	}
	ans, err := e.Approver.Approve(ctx, Request{Call: call, Pending: pending, Profile: e.fingerprint()})
	if err != nil {
		d.Effect = rules.Deny
		if errors.Is(err, ErrApprovalRequired) {
			d.Reason += "; no one can approve it here (headless), so it is denied"
			return d, err
		}
		d.Reason += "; the approver failed: " + err.Error()
		return d, fmt.Errorf("gate: approver: %w", err)
	}
	d.Approval = ans.label()
	d.Layer, d.Rule, d.Source = LayerApprover, "", ""
	saveErr := e.remember(call, pending, ans, now)
	if !ans.approves() {
		d.Effect = rules.Deny
		d.Reason = "denied by the approver"
		if ans.Reason != "" {
			d.Reason += ": " + ans.Reason
		}
		for i := range steps {
			if steps[i].Effect == rules.Ask {
				steps[i].Effect, steps[i].Layer = rules.Deny, LayerApprover
			}
		}
		return d, saveErr
	}
	if saveErr != nil {
		d.Effect = rules.Deny
		d.Reason = "approved, but the rule could not be saved: " + saveErr.Error()
		return d, saveErr
	}
	for i := range steps {
		if steps[i].Effect == rules.Ask {
			steps[i].Effect, steps[i].Layer = rules.Allow, LayerApprover
		}
	}
	d.Effect = rules.Allow
	d.Reason = "approved (" + ans.label() + ")"
	return e.withGrants(call, d, access)
}

// remember saves "always" answers as exact rules in the local layer and
// in the rules this Evaluator applies from now on. Requirements that have
// no exact rule are answered once.
func (e *Evaluator) remember(call tool.Call, pending []Pending, ans Answer, now time.Time) error {
	var effect rules.Effect
	var expires time.Time
	switch ans.Verdict {
	case ApproveAlways:
		effect = rules.Allow
	case ApproveFor:
		if ans.For <= 0 {
			return fmt.Errorf("gate: an answer for a while needs a positive duration, not %v", ans.For)
		}
		effect, expires = rules.Allow, now.Add(ans.For).Truncate(time.Second)
	case DenyAlways:
		effect = rules.Deny
	default:
		return nil
	}
	var recs []rules.NewRecord
	var learned []*rules.Rule
	for _, p := range pending {
		if !p.Savable {
			continue
		}
		if effect == rules.Allow && p.Rule != "" {
			continue // an ask rule would still ask: an allow rule changes nothing
		}
		match, err := rules.ExactMatch(p.Requirement)
		if err != nil {
			continue
		}
		reason := ""
		if effect == rules.Deny {
			reason = "denied by the user"
		}
		recs = append(recs, rules.NewRecord{Effect: effect, Match: match, Expires: expires, Reason: reason})
		ws := filepath.Clean(call.Workspace)
		r, err := rules.NewRule(effect, match, rules.Local, rules.Base{Root: ws, Cwd: ws, Home: ws})
		if err != nil {
			return err
		}
		r.Expires, r.Reason = expires, reason
		if e.Remember != nil {
			r.Source = e.Remember.Path
		}
		learned = append(learned, r)
	}
	if len(recs) == 0 {
		return nil
	}
	if e.Remember != nil {
		if err := e.Remember.Append(recs...); err != nil {
			return err
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	cur := e.learned.Load()
	if cur == nil {
		cur = rules.NewSet(nil)
	}
	e.learned.Store(cur.With(learned...))
	return nil
}

// withGrants mints a grant per Gated requirement of an allow decision.
func (e *Evaluator) withGrants(call tool.Call, d Decision, access []profile.Access) (Decision, error) {
	if e.Issuer == nil || call.ExecutionID == "" {
		return d, nil
	}
	command := ""
	if call.Tool == "Bash" {
		var in struct {
			Command string `json:"command"`
		}
		_ = json.Unmarshal(call.Input, &in) // Prepare has already read it
		command = in.Command
	}
	ttl := e.GrantTTL
	if ttl <= 0 {
		ttl = DefaultGrantTTL
	}
	dir := callDir(call)
	for i, st := range d.Requirements {
		if access[i] != profile.AccessGated {
			continue
		}
		tok, err := e.Issuer.Issue(grant.Binding{
			ExecutionID: call.ExecutionID, Command: command, Dir: dir, Profile: e.fingerprint(),
			Kind: st.Kind, Target: st.Target,
		}, ttl)
		if err != nil {
			return Decision{Effect: rules.Deny, Layer: LayerTool, Requirements: d.Requirements,
				Reason: "allowed, but no grant could be issued: " + err.Error()}, fmt.Errorf("gate: %w", err)
		}
		d.Grants = append(d.Grants, grant.Claim{Kind: st.Kind, Target: st.Target, Token: tok})
	}
	return d, nil
}

func callDir(call tool.Call) string {
	ws := call.Workspace
	if ws == "" {
		ws = "/"
	}
	switch {
	case call.Cwd == "":
		return filepath.Clean(ws)
	case filepath.IsAbs(call.Cwd):
		return filepath.Clean(call.Cwd)
	}
	return filepath.Join(ws, call.Cwd)
}

// record appends the decision to the Recorder. Grants are never recorded.
func (e *Evaluator) record(call tool.Call, d Decision) error {
	if e.Recorder == nil {
		return nil
	}
	ev := audit.Event{
		Type: audit.TypeDecision, ExecutionID: call.ExecutionID, Tool: call.Tool,
		Decision: string(d.Effect), Reason: d.Reason, Rule: d.Rule, Layer: d.Layer,
		Profile: e.fingerprint(),
		Detail:  map[string]any{"requirements": len(d.Requirements)},
	}
	if d.Requirement != nil {
		ev.Requirement = &audit.Requirement{Kind: d.Requirement.Kind, Target: d.Requirement.Target}
	}
	if d.Approval != "" {
		ev.Detail["approval"] = d.Approval
	}
	if d.Source != "" {
		ev.Detail["source"] = d.Source
	}
	if call.Identity != (tool.Identity{}) {
		ev.Detail["identity"] = call.Identity
	}
	if len(d.Grants) > 0 {
		ev.Detail["grants"] = len(d.Grants)
	}
	return e.Recorder.Append(ev)
}

// treeOnly reports whether rule matches the Tree requirement r only for
// what lies beneath its directory, not the directory itself: then the
// reason says the read of everything beneath is what it denies.
func treeOnly(rule *rules.Rule, r tool.Requirement) bool {
	r.Tree = false
	return !rule.Pattern.Matches(r, true)
}

// unseenNote is what a decision's reason adds when a command's meaning
// depends on state the gate cannot see (tool.Requirement.Unseen): the
// gate decided what is written, and only the sandbox bounds the rest.
// Every surface (policy explain, the hook, /v1/decide) gives this reason.
func unseenNote(steps []Step) string {
	for _, s := range steps {
		if u := s.Requirement.Unseen; u != "" && s.Requirement.Kind == tool.KindCommandExecute {
			return fmt.Sprintf("; what %s runs also depends on %s, which the gate cannot see: only the sandbox bounds that", s.Requirement.Argv[0], u)
		}
	}
	return ""
}
