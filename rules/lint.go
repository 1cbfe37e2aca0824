package rules

import (
	"encoding/json"
	"fmt"
	"net"
	"time"

	"github.com/airlockhq/airlock/tool"
)

// Finding says why a rule can never fire.
type Finding struct {
	Rule *Rule
	// Problem is one of "expired", "shadowed", "unmatchable".
	Problem string
	// Detail says what to do about it.
	Detail string
}

// Findings lists the rules of s that can never fire at now: expired rules,
// allow and ask rules that a deny rule always beats (and allow rules an
// ask rule always beats), and rules naming a tool airlock does not know
// or one that is decided by what it touches rather than by its name. The check
// for shadowing is exact only for bare rules and rules without wildcards;
// a wildcard rule under a narrower deny is not reported.
func (s *Set) Findings(now time.Time) []Finding {
	var out []Finding
	for _, r := range s.Rules() {
		if r.Pattern == nil {
			continue
		}
		if r.Expired(now) {
			out = append(out, Finding{r, "expired", fmt.Sprintf("expired at %s; remove it or move expires", r.Expires.Format(time.RFC3339))})
			continue
		}
		if why := unmatchable(r.Pattern); why != "" {
			out = append(out, Finding{r, "unmatchable", why})
			continue
		}
		if r.Effect == Deny {
			continue
		}
		if d := s.beatenBy(r, Deny, now); d != nil {
			out = append(out, Finding{r, "shadowed", fmt.Sprintf("deny rule %s (%s) always wins over it", d.Match, d.Where())})
			continue
		}
		if r.Effect == Allow {
			if a := s.beatenBy(r, Ask, now); a != nil {
				out = append(out, Finding{r, "shadowed", fmt.Sprintf("ask rule %s (%s) always asks first", a.Match, a.Where())})
			}
		}
	}
	return out
}

// unmatchable says why no requirement can ever match p, or "".
func unmatchable(p *Pattern) string {
	if p.Kind != tool.KindToolInvoke || p.prefix {
		return ""
	}
	switch tool.ClaudeCode(p.name).Class {
	case tool.ClassUnknown:
		return fmt.Sprintf("airlock knows no tool named %s: check the spelling (a call of a tool airlock does not know goes to a person)", p.name)
	case tool.ClassOrchestration, tool.ClassOpaque:
		return "" // decided by its name alone (tool.ClaudeCodePreparers)
	}
	reqs, _ := tool.Prepare(tool.Call{Tool: p.name, Input: json.RawMessage(`{}`), Workspace: "/"})
	for _, r := range reqs {
		if r.Kind == tool.KindToolInvoke && r.Target == p.name {
			return ""
		}
	}
	return fmt.Sprintf("%s calls are decided by what they touch, not by name; write %s(...) with a path or domain", p.name, p.name)
}

// beatenBy returns a rule of effect that matches everything r matches.
func (s *Set) beatenBy(r *Rule, effect Effect, now time.Time) *Rule {
	p := r.Pattern
	for _, o := range s.by[effect.rank()].all[p.Kind] {
		if !o.Expired(now) && (o.Pattern.OnlyTool == "" || o.Pattern.OnlyTool == p.OnlyTool) {
			return o
		}
	}
	req, ok := p.literalRequirement()
	if !ok {
		return nil
	}
	return s.Match(effect, req, now)
}

// literalRequirement is the one requirement a pattern without wildcards
// matches exactly.
func (p *Pattern) literalRequirement() (tool.Requirement, bool) {
	req := tool.Requirement{Kind: p.Kind, Tool: p.OnlyTool}
	switch {
	case p.all:
		return req, false
	case p.cmd != nil:
		if !p.cmd.isLiteral() {
			return req, false
		}
		req.Target = p.cmd.literalPrefix()
	case p.path != nil:
		if !p.path.isLiteral() {
			return req, false
		}
		req.Target = p.path.literalPrefix()
	case p.host != "":
		if p.port == "" || p.host[0] == '.' {
			return req, false
		}
		req.Target = net.JoinHostPort(p.host, p.port)
	case p.name != "":
		if p.prefix || p.arg != nil {
			return req, false
		}
		req.Target = p.name
	default:
		return req, false
	}
	return req, true
}
