package rules

import (
	"sort"
	"strings"
	"time"

	"github.com/airlockhq/airlock/tool"
)

// Set is an immutable, indexed collection of rules from every layer. It is
// safe for concurrent use.
type Set struct {
	rules []*Rule
	by    [3]index // by Effect.rank()
}

// index finds the few rules of one effect that can match a requirement
// without trying them all: commands by their first word, paths by the
// directory the pattern starts in, hosts and tools by name.
type index struct {
	all        map[string][]*Rule // bare rules, by kind
	cmd        *wordNode          // Bash rules by their literal leading words
	canon      *wordNode          // Bash rules by their canonical program and subcommand
	canonOther []*Rule            // Bash rules whose program is a wildcard
	pathDir    map[string][]*Rule // path rules by literal start directory
	dirs       []string           // the keys of pathDir, sorted, for Tree targets
	paths      map[string][]*Rule // every path rule, by kind, for holed targets
	host       map[string][]*Rule // network rules by exact host
	hostSfx    []*Rule            // network rules for *.suffix
	tool       map[string][]*Rule // tool.invoke rules by exact name
	toolPfx    []*Rule            // tool.invoke rules for a server or prefix
}

// NewSet indexes rules. Their order decides which matching rule a decision
// names: rules are ordered by layer, strongest first, and keep their order
// within a layer.
func NewSet(rules []*Rule) *Set {
	rs := append([]*Rule(nil), rules...)
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Layer.rank() < rs[j].Layer.rank() })
	s := &Set{rules: rs}
	for i := range s.by {
		s.by[i] = index{
			all: map[string][]*Rule{}, cmd: &wordNode{}, canon: &wordNode{}, pathDir: map[string][]*Rule{},
			paths: map[string][]*Rule{}, host: map[string][]*Rule{}, tool: map[string][]*Rule{},
		}
	}
	for i, r := range rs {
		r.seq = i
		if r.Pattern == nil || r.Effect.rank() < 0 {
			continue
		}
		s.by[r.Effect.rank()].add(r)
	}
	for i := range s.by {
		x := &s.by[i]
		for d := range x.pathDir {
			x.dirs = append(x.dirs, d)
		}
		sort.Strings(x.dirs)
	}
	return s
}

// With returns a new Set with rules added (after the existing rules of
// their layer).
func (s *Set) With(rules ...*Rule) *Set {
	return NewSet(append(append([]*Rule(nil), s.rules...), rules...))
}

// Rules returns every rule of the set, strongest layer first.
func (s *Set) Rules() []*Rule {
	if s == nil {
		return nil
	}
	return append([]*Rule(nil), s.rules...)
}

// Len returns the number of rules.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.rules)
}

func (x *index) add(r *Rule) {
	p := r.Pattern
	if p.all {
		x.all[p.Kind] = append(x.all[p.Kind], r)
		return
	}
	switch p.Kind {
	case tool.KindCommandExecute:
		x.cmd.add(literalWords(p.cmd), r)
		if p.canon != nil {
			x.canon.add(p.canon.words, r)
		} else {
			x.canonOther = append(x.canonOther, r)
		}
	case tool.KindFilesystemRead, tool.KindFilesystemWrite:
		x.pathDir[p.dir] = append(x.pathDir[p.dir], r)
		if p.alt != nil && p.altDir != p.dir {
			x.pathDir[p.altDir] = append(x.pathDir[p.altDir], r)
		}
		x.paths[p.Kind] = append(x.paths[p.Kind], r)
	case tool.KindNetworkConnect:
		if strings.HasPrefix(p.host, ".") {
			x.hostSfx = append(x.hostSfx, r)
		} else {
			x.host[p.host] = append(x.host[p.host], r)
		}
	case tool.KindToolInvoke:
		if p.prefix {
			x.toolPfx = append(x.toolPfx, r)
		} else {
			x.tool[p.name] = append(x.tool[p.name], r)
		}
	}
}

// wordNode is a trie of command words. A rule sits at the node of the
// complete literal words its pattern starts with; the words a command
// starts with lead to every rule that can match it.
type wordNode struct {
	rules    []*Rule
	children map[string]*wordNode
}

func (n *wordNode) add(words []string, r *Rule) {
	for _, w := range words {
		if n.children == nil {
			n.children = map[string]*wordNode{}
		}
		c := n.children[w]
		if c == nil {
			c = &wordNode{}
			n.children[w] = c
		}
		n = c
	}
	n.rules = append(n.rules, r)
}

// each calls fn with the rule list of n and of every node below it.
func (n *wordNode) each(fn func([]*Rule)) {
	fn(n.rules)
	for _, c := range n.children {
		c.each(fn)
	}
}

// literalWords returns the complete words a command glob starts with,
// before any word that holds a wildcard.
func literalWords(g *glob) []string {
	var words []string
	var b strings.Builder
	for _, t := range g.toks {
		switch {
		case t.kind != tokLit:
			return words
		case t.r == ' ':
			words = append(words, b.String())
			b.Reset()
		default:
			b.WriteRune(t.r)
		}
	}
	if b.Len() > 0 {
		words = append(words, b.String())
	}
	return words
}

// Match returns the rule of the given effect that matches r, from the
// strongest layer, or nil. Expired rules do not match. Allow rules match
// strictly (an unknown part of r matches only a wildcard); deny and ask
// rules match conservatively (an unknown part may be anything).
//
// A deny or ask rule also matches when it matches one of r.Names, the
// other names the call gave the same file: the path as written and as it
// read before each symlink on the way was followed. An allow rule must
// match where the path leads.
func (s *Set) Match(effect Effect, r tool.Requirement, now time.Time) *Rule {
	return s.MatchUnless(effect, r, now, nil)
}

// MatchUnless is Match passing over the rules skip reports, as if they
// were not in the set: the gate skips the deny rules a sandbox enforces
// for a read of a whole tree it runs. A nil skip passes over none.
func (s *Set) MatchUnless(effect Effect, r tool.Requirement, now time.Time, skip func(*Rule) bool) *Rule {
	best := s.match(effect, r, now, skip)
	if effect == Allow || len(r.Names) == 0 {
		return best
	}
	for _, n := range r.Names {
		alt := r
		alt.Target, alt.Names, alt.Shape = n, nil, ""
		if rule := s.match(effect, alt, now, skip); rule != nil && (best == nil || rule.seq < best.seq) {
			best = rule
		}
	}
	return best
}

func (s *Set) match(effect Effect, r tool.Requirement, now time.Time, skip func(*Rule) bool) *Rule {
	if s == nil || effect.rank() < 0 {
		return nil
	}
	mode := conservative
	if effect == Allow {
		mode = strict
	}
	x := &s.by[effect.rank()]
	subj := newSubject(&r)
	f := finder{now: now, mode: mode, skip: skip}
	try := func(list []*Rule) {
		for _, rule := range list {
			if !f.better(rule) {
				return // lists are in seq order: nothing better follows
			}
			if f.passed(rule) || !rule.Pattern.match(subj, mode) {
				continue
			}
			f.best = rule
			return
		}
	}
	try(x.all[r.Kind])
	switch r.Kind {
	case tool.KindCommandExecute:
		// The canonical form decides allow rules; deny and ask rules
		// match it or the written text (canon.go).
		if r.Canon != nil && !r.Unparsed && !(mode == strict && r.Unresolved) {
			var cs canonSubject
			cs.init(r.Canon)
			x.matchCanonical(&cs, &f)
			if mode == strict {
				break
			}
		}
		if r.Unparsed && mode == conservative {
			// Unparsed text has no reliable words: try every rule.
			x.cmd.each(try)
			break
		}
		n := x.cmd
		text := subj.text
		for n != nil {
			try(n.rules)
			if text == "" {
				break
			}
			word, rest, _ := strings.Cut(text, " ")
			if strings.ContainsRune(word, tool.Hole) {
				// The word is unknown: to a deny or ask rule it may be
				// any word, so every rule below may match.
				if mode == conservative {
					for _, c := range n.children {
						c.each(try)
					}
				}
				break
			}
			n, text = n.children[word], rest
		}
	case tool.KindFilesystemRead, tool.KindFilesystemWrite:
		if subj.holes {
			if mode == conservative {
				subj.noParents = true
				try(x.paths[r.Kind])
				subj.noParents = false
				if f.best != nil {
					break
				}
			}
			try(x.paths[r.Kind])
			break
		}
		for d := subj.text; ; d = parentDir(d) {
			try(x.pathDir[d])
			if d == "/" || d == "" {
				break
			}
		}
		if r.Tree {
			// Rules that start beneath the directory are about part of it.
			prefix := strings.TrimSuffix(subj.text, "/") + "/"
			for i := sort.SearchStrings(x.dirs, prefix); i < len(x.dirs) && strings.HasPrefix(x.dirs[i], prefix); i++ {
				try(x.pathDir[x.dirs[i]])
			}
		}
	case tool.KindNetworkConnect:
		host := r.Target
		if i := strings.LastIndexByte(host, ':'); i >= 0 {
			host = host[:i]
		}
		try(x.host[strings.ToLower(strings.Trim(host, "[]"))])
		try(x.hostSfx)
	case tool.KindToolInvoke:
		try(x.tool[r.Target])
		try(x.toolPfx)
	}
	return f.best
}

func parentDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}
