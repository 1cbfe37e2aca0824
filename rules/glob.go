package rules

import (
	"strings"

	"github.com/airlockhq/airlock/tool"
)

// tokKind is one element of a compiled glob.
type tokKind uint8

const (
	tokLit    tokKind = iota // one literal rune
	tokStar                  // any run of runes; in paths, not crossing "/"
	tokAny                   // "**": any run of runes, "/" included
	tokAnyDir                // "**/": nothing, or any run ending in "/"
	tokQuest                 // "?": one rune other than "/"
)

type token struct {
	kind tokKind
	r    rune
}

// glob is a compiled command or path pattern.
type glob struct {
	toks []token
	// paths: "*" and "?" stop at "/".
	paths bool
	// Fast paths for the common shapes, used when the input has no Hole:
	// exact is set for a pattern without wildcards; prefix for one whose
	// only wildcard is a trailing "*" (or "**" in paths).
	exact, prefix string
	kind          globShape
}

type globShape uint8

const (
	shapeGeneral globShape = iota
	shapeExact
	shapePrefix
)

// finish computes the fast-path fields after the tokens are set.
func (g *glob) finish() *glob {
	lit := g.literalPrefix()
	n := len([]rune(lit))
	switch {
	case n == len(g.toks):
		g.kind, g.exact = shapeExact, lit
	case n == len(g.toks)-1 && (g.toks[n].kind == tokAny || g.toks[n].kind == tokStar && !g.paths):
		g.kind, g.prefix = shapePrefix, lit
	}
	return g
}

// matchString matches s, which must not contain a Hole.
func (g *glob) matchString(s string) bool {
	switch g.kind {
	case shapeExact:
		return s == g.exact
	case shapePrefix:
		return strings.HasPrefix(s, g.prefix)
	}
	return g.match([]rune(s), strict)
}

// matchMode says how a Hole in the input is read.
type matchMode uint8

const (
	// strict (allow rules): a Hole is unknown text that only a wildcard
	// of the pattern can stand for, never a literal.
	strict matchMode = iota
	// conservative (deny and ask rules): a Hole may be anything, so it
	// matches any part of the pattern.
	conservative
)

// match reports whether g matches the runes in in the given mode.
func (g *glob) match(in []rune, mode matchMode) bool {
	n := (len(g.toks) + 1) * (len(in) + 1)
	var memoBuf [1024]int8
	var memo []int8
	if n <= len(memoBuf) {
		memo = memoBuf[:n]
	} else {
		memo = make([]int8, n)
	}
	m := globMatcher{p: g.toks, s: in, paths: g.paths, mode: mode, memo: memo}
	return m.at(0, 0)
}

type globMatcher struct {
	p     []token
	s     []rune
	paths bool
	mode  matchMode
	memo  []int8 // 0 unknown, 1 true, 2 false
}

func (m *globMatcher) at(i, j int) bool {
	k := i*(len(m.s)+1) + j
	if v := m.memo[k]; v != 0 {
		return v == 1
	}
	ok := m.compute(i, j)
	if ok {
		m.memo[k] = 1
	} else {
		m.memo[k] = 2
	}
	return ok
}

func (m *globMatcher) compute(i, j int) bool {
	if i == len(m.p) && j == len(m.s) {
		return true
	}
	if j < len(m.s) && m.s[j] == tool.Hole && m.mode == conservative {
		// The hole may be empty, or stand for the next pattern element.
		if m.at(i, j+1) {
			return true
		}
		return i < len(m.p) && m.at(i+1, j)
	}
	if i == len(m.p) {
		return false
	}
	t := m.p[i]
	switch t.kind {
	case tokLit:
		return j < len(m.s) && m.s[j] == t.r && m.at(i+1, j+1)
	case tokQuest:
		return j < len(m.s) && m.s[j] != tool.Hole && !(m.paths && m.s[j] == '/') && m.at(i+1, j+1)
	case tokStar, tokAny:
		if m.at(i+1, j) {
			return true
		}
		if j == len(m.s) || t.kind == tokStar && m.paths && m.s[j] == '/' {
			return false
		}
		return m.at(i, j+1)
	case tokAnyDir:
		if m.at(i+1, j) {
			return true
		}
		for k := j; k < len(m.s); k++ {
			if (m.s[k] == '/' || m.s[k] == tool.Hole) && m.at(i+1, k+1) {
				return true
			}
		}
		return false
	}
	return false
}

// literalPrefix returns the literal runes before the first wildcard.
func (g *glob) literalPrefix() string {
	var out []rune
	for _, t := range g.toks {
		if t.kind != tokLit {
			break
		}
		out = append(out, t.r)
	}
	return string(out)
}

// isLiteral reports whether g has no wildcard.
func (g *glob) isLiteral() bool {
	for _, t := range g.toks {
		if t.kind != tokLit {
			return false
		}
	}
	return true
}

// compileCommand compiles a Bash specifier: "*" matches any text, "\*" is
// a literal star, runs of spaces are one space.
func compileCommand(spec string) *glob {
	g := &glob{}
	space := false
	rs := []rune(spec)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == ' ' || r == '\t' || r == '\n':
			space = true
			continue
		case r == '\\' && i+1 < len(rs):
			i++
			r = rs[i]
			if r == tool.Hole {
				r = '\uFFFD'
			}
			g.addSpace(&space)
			g.toks = append(g.toks, token{kind: tokLit, r: r})
			continue
		case r == '*':
			g.addSpace(&space)
			g.toks = append(g.toks, token{kind: tokStar})
			continue
		case r == tool.Hole:
			r = '\uFFFD'
		}
		g.addSpace(&space)
		g.toks = append(g.toks, token{kind: tokLit, r: r})
	}
	return g.finish()
}

func (g *glob) addSpace(pending *bool) {
	if *pending && len(g.toks) > 0 {
		g.toks = append(g.toks, token{kind: tokLit, r: ' '})
	}
	*pending = false
}

// compilePath compiles an absolute path pattern: "*" and "?" within one
// path element, "**" across elements, "\x" a literal x.
func compilePath(pattern string) *glob {
	g := &glob{paths: true}
	rs := []rune(pattern)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\\' && i+1 < len(rs):
			i++
			g.toks = append(g.toks, token{kind: tokLit, r: rs[i]})
		case r == '*' && i+1 < len(rs) && rs[i+1] == '*':
			i++
			for i+1 < len(rs) && rs[i+1] == '*' {
				i++
			}
			if i+1 < len(rs) && rs[i+1] == '/' {
				i++
				g.toks = append(g.toks, token{kind: tokAnyDir})
			} else {
				g.toks = append(g.toks, token{kind: tokAny})
			}
		case r == '*':
			g.toks = append(g.toks, token{kind: tokStar})
		case r == '?':
			g.toks = append(g.toks, token{kind: tokQuest})
		case r == tool.Hole:
			g.toks = append(g.toks, token{kind: tokLit, r: '\uFFFD'})
		default:
			g.toks = append(g.toks, token{kind: tokLit, r: r})
		}
	}
	return g.finish()
}
