package rules

import (
	"fmt"
	"time"
)

// Effect is what a rule does to the requirements it matches.
type Effect string

const (
	// Allow meets a requirement without asking.
	Allow Effect = "allow"
	// Ask sends a requirement to the approver even when a rule or the
	// profile would allow it.
	Ask Effect = "ask"
	// Deny refuses a requirement, whatever else allows it.
	Deny Effect = "deny"
)

// ParseEffect parses "allow", "ask" or "deny".
func ParseEffect(s string) (Effect, error) {
	switch e := Effect(s); e {
	case Allow, Ask, Deny:
		return e, nil
	}
	return "", fmt.Errorf("%w: effect %q: use allow, ask or deny", ErrSyntax, s)
}

func (e Effect) rank() int {
	switch e {
	case Deny:
		return 0
	case Ask:
		return 1
	case Allow:
		return 2
	}
	return -1
}

// Layer is where a rule comes from. Layers are ordered strongest first,
// which only decides which of several matching rules a decision names:
// any deny wins over every ask, any ask over every allow.
type Layer string

const (
	// Managed rules are set for the whole machine (/etc/airlock/).
	Managed Layer = "managed"
	// User rules are the user's (~/.config/airlock/).
	User Layer = "user"
	// Workspace rules belong to the project (.airlock/policy.toml and
	// .claude/settings.json).
	Workspace Layer = "workspace"
	// Local rules are the user's for this workspace
	// (.airlock/policy.local.toml, .claude/settings.local.json); "always"
	// answers are written here.
	Local Layer = "local"
)

// Layers returns the layers, strongest first.
func Layers() []Layer { return []Layer{Managed, User, Workspace, Local} }

func (l Layer) rank() int {
	for i, x := range Layers() {
		if x == l {
			return i
		}
	}
	return len(Layers())
}

// Rule is one parsed rule.
type Rule struct {
	Effect Effect `json:"effect"`
	// Match is the rule's match text as written.
	Match string `json:"match"`
	// Reason is shown to the agent when the rule denies.
	Reason string `json:"reason,omitempty"`
	// Expires, when set, is when the rule stops applying.
	Expires time.Time `json:"expires,omitzero"`
	Layer   Layer     `json:"layer"`
	// Source is the file the rule was read from; Line its line there
	// (0 when unknown).
	Source string `json:"source,omitempty"`
	Line   int    `json:"line,omitempty"`
	// Examples are the rule's inline tests ([[rule.example]]).
	Examples []Example `json:"examples,omitempty"`

	Pattern *Pattern `json:"-"`
	seq     int      // position in its Set: layer order, then file order
}

// Example is an inline test written next to a rule: calling Tool with
// Input must be decided Expect.
type Example struct {
	// Tool defaults to the rule's tool.
	Tool string `json:"tool"`
	// Input is the tool's JSON input.
	Input  string `json:"input"`
	Expect Effect `json:"expect"`
	Line   int    `json:"line,omitempty"`
}

// NewRule parses match into a rule of the given effect and layer.
func NewRule(effect Effect, match string, layer Layer, base Base) (*Rule, error) {
	if _, err := ParseEffect(string(effect)); err != nil {
		return nil, err
	}
	p, err := ParsePattern(match, base)
	if err != nil {
		return nil, err
	}
	return &Rule{Effect: effect, Match: match, Layer: layer, Pattern: p}, nil
}

// Expired reports whether the rule has expired at now.
func (r *Rule) Expired(now time.Time) bool {
	return !r.Expires.IsZero() && !now.Before(r.Expires)
}

// Where names the rule's origin as "file:line" (or the layer).
func (r *Rule) Where() string {
	switch {
	case r.Source != "" && r.Line > 0:
		return fmt.Sprintf("%s:%d", r.Source, r.Line)
	case r.Source != "":
		return r.Source
	}
	return string(r.Layer)
}

func (r *Rule) String() string {
	return fmt.Sprintf("%s %s (%s)", r.Effect, r.Match, r.Where())
}
