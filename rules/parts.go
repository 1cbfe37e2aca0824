package rules

import (
	"strings"

	"github.com/airlockhq/airlock/tool"
)

// The parts of a pattern another enforcement layer needs to compile a
// rule into its own terms (package workspace turns deny rules into a
// sandbox profile): the paths, hosts and programs a pattern is about.

// All reports whether the pattern matches every requirement of its kind
// (a bare "Read", "Bash", "Net").
func (p *Pattern) All() bool { return p.all }

// maxAlternatives bounds the element-wise globs one path pattern becomes:
// each "**" inside a path element doubles them.
const maxAlternatives = 16

// ElementGlobs returns the absolute path globs a Read or Edit pattern is
// about, written element by element: within one element the syntax of
// path/filepath.Match ("*", "?", "\x"; "[" is always escaped, as rules
// have no classes), and an element "**" alone matches any number of
// elements, including none. A path matches the pattern exactly when it or
// one of its parents matches one of the globs, which is how the pattern
// itself matches. The pattern with symlinks in its fixed directory
// resolved is included when that differs.
//
// ok is false for a pattern that is not about paths, and when "**" inside
// path elements would take more than a handful of globs to write.
func (p *Pattern) ElementGlobs() (globs []string, ok bool) {
	if p.path == nil {
		return nil, false
	}
	for _, g := range []*glob{p.path, p.alt} {
		if g == nil {
			continue
		}
		alts, ok := elementGlobs(g)
		if !ok {
			return nil, false
		}
		globs = append(globs, alts...)
	}
	return globs, true
}

// elementGlobs writes one compiled path glob element by element. A "**"
// that is not a whole element ("a**b") matches either within the element
// ("a*b") or across elements ("a*/**/*b"); a "**/" inside an element
// ("a**/b") matches either nothing or a run ending in "/" ("a*/**/b").
func elementGlobs(g *glob) ([]string, bool) {
	outs := []string{""}
	add := func(alts ...string) bool {
		if len(outs)*len(alts) > maxAlternatives {
			return false
		}
		next := make([]string, 0, len(outs)*len(alts))
		for _, o := range outs {
			for _, a := range alts {
				next = append(next, o+a)
			}
		}
		outs = next
		return true
	}
	toks := g.toks
	for i, t := range toks {
		// At an element's start: the previous token is a literal "/".
		start := i > 0 && toks[i-1].kind == tokLit && toks[i-1].r == '/'
		end := i == len(toks)-1 || toks[i+1].kind == tokLit && toks[i+1].r == '/'
		var ok bool
		switch t.kind {
		case tokLit:
			r := string(t.r)
			if strings.ContainsRune(`*?[\`, t.r) {
				r = `\` + r
			}
			ok = add(r)
		case tokStar:
			ok = add("*")
		case tokQuest:
			ok = add("?")
		case tokAny:
			switch {
			case start && end:
				ok = add("**")
			case start:
				ok = add("**/*")
			case end:
				// "a**" at the end: a name starting with "a", or
				// anything beneath one, which its parent covers.
				ok = add("*")
			default:
				ok = add("*", "*/**/*")
			}
		case tokAnyDir:
			if start {
				ok = add("**/")
			} else {
				ok = add("", "*/**/")
			}
		}
		if !ok {
			return nil, false
		}
	}
	for i, o := range outs {
		// "**/" before the end leaves "x/**/" for "x/**/": a trailing
		// slash names the same path.
		if len(o) > 1 {
			outs[i] = strings.TrimSuffix(o, "/")
		}
	}
	return outs, true
}

// Host returns a Net or WebFetch pattern's host, written "*.suffix" for
// a wildcard, and its port ("" for any). ok is false for other patterns
// and bare ones.
func (p *Pattern) Host() (host, port string, ok bool) {
	if p.Kind != tool.KindNetworkConnect || p.all || p.host == "" {
		return "", "", false
	}
	host = p.host
	if strings.HasPrefix(host, ".") {
		host = "*" + host
	}
	return host, p.port, true
}

// Program returns the program a Bash pattern names, in its canonical
// form (a bare name such as "rm", or a path when the rule gave one
// outside the system directories), and whether the pattern matches every
// use of that program: no subcommand, no flag, no argument, only a
// trailing "*" ("rm:*", "rm *"). ok is false when the pattern has no
// literal program (a wildcard first word) or is not a Bash pattern.
func (p *Pattern) Program() (program string, whole, ok bool) {
	if p.Kind != tool.KindCommandExecute || p.all || p.canon == nil || len(p.canon.words) == 0 {
		return "", false, false
	}
	c := p.canon
	whole = len(c.words) == 1 && len(c.flags) == 0 && c.rest.kind == shapePrefix && c.rest.prefix == ""
	return c.words[0], whole, true
}
