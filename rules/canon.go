package rules

import (
	"slices"
	"strings"
	"time"

	"github.com/airlockhq/airlock/shell"
	"github.com/airlockhq/airlock/tool"
)

// A Bash rule is compared with a command's canonical form as well as with
// its text (docs/RULES.md): the rule's literal leading words are put in
// the same form as commands are (shell.CanonicalCommand), so that
// "Bash(rm -rf:*)" is rm with the flags -f and -r, whatever else the
// command has and however it spells them. Deny and ask rules match the
// written text or the canonical form; allow rules match the canonical form
// only, so that a spelling that hides an action (a global option, a path)
// is judged by the action.

// canonPattern is a Bash rule in canonical form.
type canonPattern struct {
	// words are the program and its subcommand: the rule's place in the
	// canonical index.
	words []string
	// flags are the flags the command must have (sorted).
	flags []string
	// global are git's global options the rule names ("-C /repo/a"):
	// when an allow rule names any, the command must have exactly these,
	// so the exact rule saved for "git -C /repo/a push" allows no push
	// elsewhere.
	global []string
	// rest matches what follows the words and flags: the command's
	// further subcommand words, its other flags, then the rest; short is
	// rest without a trailing " *", which may match nothing.
	rest, short *glob
}

// compileCanonical puts a Bash specifier in canonical form, or returns nil
// when its first word has a wildcard.
func compileCanonical(spec string) *canonPattern {
	// Words are split where compileCommand sees blanks.
	fields := strings.FieldsFunc(spec, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' })
	var words []string
	for _, f := range fields {
		w, ok := unescapeLiteral(f)
		if !ok {
			break
		}
		words = append(words, w)
	}
	n := len(words)
	if n == 0 {
		return nil
	}
	c := shell.CanonicalCommand(words)
	if c == nil {
		return nil
	}
	parts := make([]string, 0, len(c.Rest)+len(fields)-n)
	for _, r := range c.Rest {
		parts = append(parts, escapeGlob(r))
	}
	rest := strings.Join(append(parts, fields[n:]...), " ")
	cp := &canonPattern{words: append([]string{c.Name}, c.Words...), flags: c.Flags, global: c.Global, rest: compileCommand(rest)}
	if s, ok := strings.CutSuffix(rest, " *"); ok {
		cp.short = compileCommand(s)
	}
	return cp
}

// canonSubject is a command's canonical form prepared for matching.
type canonSubject struct {
	form *tool.CommandForm
	// key is the program and subcommand words; loose is key with the
	// program's last path element, when that differs ("./rm" is "rm" to
	// a deny rule).
	key, loose []string
	full       string // the whole form as text, for rules with no canonical form
	buf        [2]string
}

func newCanonSubject(f *tool.CommandForm) *canonSubject {
	cs := &canonSubject{}
	cs.init(f)
	return cs
}

func (cs *canonSubject) init(f *tool.CommandForm) {
	cs.form = f
	cs.key = append(append(cs.buf[:0], f.Name), f.Words...)
	if i := strings.LastIndexByte(f.Name, '/'); i >= 0 && i < len(f.Name)-1 {
		cs.loose = append([]string{f.Name[i+1:]}, f.Words...)
	}
}

// text is the form as one line from the key word at depth on: further
// words, the flags the rule does not name, then the rest.
func (cs *canonSubject) text(depth int, key []string, skip []string) string {
	var b strings.Builder
	sep := func() {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
	}
	for _, w := range key[depth:] {
		sep()
		b.WriteString(w)
	}
	j := 0
	for _, f := range cs.form.Flags {
		for j < len(skip) && skip[j] < f {
			j++
		}
		if j < len(skip) && skip[j] == f {
			continue
		}
		sep()
		b.WriteString(f)
	}
	for _, r := range cs.form.Rest {
		sep()
		b.WriteString(r)
	}
	// As in rule text, runs of blanks are one space, and an empty or
	// blank word leaves none.
	t := b.String()
	if strings.HasPrefix(t, " ") || strings.HasSuffix(t, " ") {
		return strings.Join(strings.Fields(t), " ")
	}
	return collapseSpace(t)
}

// matchCanon reports whether the rule, found at depth in the canonical
// index by key, matches the command's canonical form.
func (p *Pattern) matchCanon(cs *canonSubject, key []string, depth int, mode matchMode) bool {
	cp := p.canon
	if cp == nil || len(cp.words) != depth {
		return false
	}
	// Global options narrow allow rules only: a deny or ask rule that
	// names them still catches the action however the command spells its
	// global options (adding "-c x=y" must not slip past a deny).
	if mode != conservative && len(cp.global) > 0 && !slices.Equal(cp.global, cs.form.Global) {
		return false
	}
	have := cs.form.Flags
	j := 0
	for _, f := range cp.flags {
		for j < len(have) && have[j] < f {
			j++
		}
		if j < len(have) && have[j] == f {
			continue
		}
		if mode != conservative || !cs.form.Open {
			return false
		}
	}
	if cp.rest.kind == shapePrefix && cp.rest.prefix == "" {
		return true // "*": whatever follows
	}
	text := cs.text(depth, key, cp.flags)
	if matchText(cp.rest, text, mode) {
		return true
	}
	return cp.short != nil && matchText(cp.short, text, mode)
}

// matchText matches a command glob against text that may hold Holes.
func matchText(g *glob, text string, mode matchMode) bool {
	if !strings.ContainsRune(text, tool.Hole) {
		return g.matchString(text)
	}
	return g.match([]rune(text), mode)
}

// fullText is the whole canonical form as one line.
func (cs *canonSubject) fullText() string {
	if cs.full == "" {
		cs.full = cs.text(0, cs.key, nil)
	}
	return cs.full
}

// finder keeps the best matching rule of one Set.Match.
type finder struct {
	now  time.Time
	mode matchMode
	best *Rule
	// skip, when set, passes over the rules it reports (MatchUnless).
	skip func(*Rule) bool
}

// passed reports whether rule cannot match at all: expired or skipped.
func (f *finder) passed(rule *Rule) bool {
	return rule.Expired(f.now) || f.skip != nil && f.skip(rule)
}

// better reports whether rule could beat the best so far: lists are in
// seq order, so after a worse one nothing better follows.
func (f *finder) better(rule *Rule) bool {
	return f.best == nil || rule.seq < f.best.seq
}

// matchCanonical finds the rules of x that match the command's canonical
// form.
func (x *index) matchCanonical(cs *canonSubject, f *finder) {
	x.walkCanonical(cs, cs.key, f)
	if f.mode == conservative && cs.loose != nil {
		x.walkCanonical(cs, cs.loose, f)
	}
	// Rules whose program is a wildcard compare their text with the
	// whole form.
	for _, rule := range x.canonOther {
		if !f.better(rule) {
			break
		}
		if !f.passed(rule) && rule.Pattern.matchCanonOne(cs, f.mode) {
			f.best = rule
			break
		}
	}
}

// matchCanonOne is matchCanonical for one rule.
func (p *Pattern) matchCanonOne(cs *canonSubject, mode matchMode) bool {
	if p.canon == nil {
		text := cs.fullText()
		return matchText(p.cmd, text, mode) || p.short != nil && matchText(p.short, text, mode)
	}
	keys := [][]string{cs.key}
	if mode == conservative && cs.loose != nil {
		keys = append(keys, cs.loose)
	}
	for _, key := range keys {
		d := len(p.canon.words)
		if d <= len(key) && slices.Equal(key[:d], p.canon.words) && p.matchCanon(cs, key, d, mode) {
			return true
		}
	}
	return false
}

// unescapeLiteral returns a word of rule text without its escapes, when it
// has no wildcard.
func unescapeLiteral(s string) (string, bool) {
	if strings.ContainsRune(s, tool.Hole) {
		return "", false
	}
	if !strings.ContainsAny(s, `*\`) {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '*':
			return "", false
		case s[i] == '\\' && i+1 < len(s):
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String(), true
}

// walkCanonical tries the rules on the path of key in the canonical index.
func (x *index) walkCanonical(cs *canonSubject, key []string, f *finder) {
	n := x.canon
	for depth := 0; n != nil; depth++ {
		for _, rule := range n.rules {
			if !f.better(rule) {
				break
			}
			if !f.passed(rule) && rule.Pattern.matchCanon(cs, key, depth, f.mode) {
				f.best = rule
				break
			}
		}
		if depth == len(key) {
			break
		}
		n = n.children[key[depth]]
	}
}
