package shell

import (
	"slices"
	"strings"

	"github.com/airlockhq/airlock/tool"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// piece is one part of a shell word after quote removal.
type piece struct {
	// text is the literal value, or for an expansion its source text.
	text string
	// expansion marks a part only known at run time ($x, $(...), ...).
	expansion bool
	// quoted marks literal text that came from quotes or from "~": glob
	// characters in it are literal.
	quoted bool
	// wild marks a part a command fills in at run time that stays below
	// the directory before it, as a glob does: the paths find hands to
	// -exec, the name curl -J takes from the server. Its text is shown;
	// it is a Hole in the shape.
	wild bool
}

// shWord is a rendered shell word.
type shWord struct{ pieces []piece }

// text is the word as shown: literal text after quote removal, expansions
// as their source text.
func (sw shWord) text() string {
	if len(sw.pieces) == 1 {
		return sw.pieces[0].text
	}
	var b strings.Builder
	for _, p := range sw.pieces {
		b.WriteString(p.text)
	}
	return b.String()
}

// shape is the word with every expansion as a Hole. With globs set, the
// unquoted glob and brace characters are Holes too.
func (sw shWord) shape(globs bool) string {
	if len(sw.pieces) == 1 {
		p := sw.pieces[0]
		if !p.expansion && !p.wild && (!globs || p.quoted || !sw.globAt(0, -1)) {
			return p.text
		}
	}
	var b strings.Builder
	for k, p := range sw.pieces {
		switch {
		case p.expansion, p.wild && globs:
			b.WriteRune(tool.Hole)
		case globs && !p.quoted && !p.wild:
			for i, c := range p.text {
				if c < 0x80 && sw.globAt(k, i) {
					b.WriteRune(tool.Hole)
				} else {
					b.WriteRune(c)
				}
			}
		default:
			b.WriteString(p.text)
		}
	}
	return b.String()
}

func (sw shWord) hasExpansion() bool {
	for _, p := range sw.pieces {
		if p.expansion {
			return true
		}
	}
	return false
}

func (sw shWord) hasGlob() bool {
	for k, p := range sw.pieces {
		if p.wild || !p.expansion && !p.quoted && sw.globAt(k, -1) {
			return true
		}
	}
	return false
}

// globAt reports whether byte i of piece k (any byte of it, for -1) is a
// glob or brace character: "*" and "?" always, "[" and "{" only when a
// "]" or "}" follows in the word, since a lone "[" is the test command
// and a lone "{" a literal.
func (sw shWord) globAt(k, i int) bool {
	text := sw.pieces[k].text
	if i < 0 {
		for j := 0; j < len(text); j++ {
			if sw.globAt(k, j) {
				return true
			}
		}
		return false
	}
	var closing byte
	switch text[i] {
	case '*', '?':
		return true
	case '[':
		closing = ']'
	case '{':
		closing = '}'
	default:
		return false
	}
	if strings.IndexByte(text[i+1:], closing) >= 0 {
		return true
	}
	for _, p := range sw.pieces[k+1:] {
		if p.expansion || strings.IndexByte(p.text, closing) >= 0 {
			return true
		}
	}
	return false
}

// literal returns the word's text when all of it is known before the
// command runs.
func (sw shWord) literal() (string, bool) {
	for _, p := range sw.pieces {
		if p.expansion || p.wild {
			return "", false
		}
	}
	return sw.text(), true
}

// maxBraceWords bounds the words one brace expansion may give
// ("{a,b}{c,d}..." doubles with each group); past it the word is one
// only known at run time.
const maxBraceWords = 256

// renderWords renders a command's words after brace expansion, which
// bash does first and in every word, the program's and the
// subcommand's too: "git pu{sh,}" is "git push pu", "git
// {push,origin,main}" is "git push origin main".
func (w *bashWalker) renderWords(words []*syntax.Word) []shWord {
	out := make([]shWord, 0, len(words))
	for _, word := range words {
		out = append(out, w.braceWords(word)...)
	}
	return out
}

// braceWords renders one word, brace expanded.
func (w *bashWalker) braceWords(word *syntax.Word) []shWord {
	if !slices.ContainsFunc(word.Parts, func(p syntax.WordPart) bool {
		lit, ok := p.(*syntax.Lit)
		return ok && strings.Contains(lit.Value, "{")
	}) {
		return []shWord{w.render(word)}
	}
	split := &syntax.Word{Parts: slices.Clone(word.Parts)}
	if !syntax.SplitBraces(split) {
		return []shWord{w.render(word)}
	}
	var out []shWord
	for ew, err := range expand.BracesSeq(nil, split) {
		if err != nil || len(out) == maxBraceWords {
			return []shWord{{pieces: []piece{{text: w.source(word), expansion: true}}}}
		}
		out = append(out, w.render(ew))
	}
	if len(out) == 1 {
		return []shWord{w.render(word)} // "{}", "a{b}": no expansion, as written
	}
	return out
}

// render removes quotes from a word and expands a leading "~" or "~/".
func (w *bashWalker) render(word *syntax.Word) shWord {
	var sw shWord
	for i, part := range word.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := unescapeUnquoted(p.Value)
			if i == 0 && strings.HasPrefix(v, "~") {
				head, rest, slash := strings.Cut(v, "/")
				if head != "~" {
					// ~user, ~+, ~-: only known at run time.
					sw.pieces = append(sw.pieces, piece{text: head, expansion: true})
				} else {
					sw.pieces = append(sw.pieces, piece{text: w.home, quoted: true})
				}
				if slash {
					sw.pieces = append(sw.pieces, piece{text: "/" + rest})
				}
				continue
			}
			sw.pieces = append(sw.pieces, piece{text: v})
		case *syntax.SglQuoted:
			if p.Dollar { // $'...' has escapes; treat its value as unknown
				sw.pieces = append(sw.pieces, piece{text: w.source(p), expansion: true})
				continue
			}
			sw.pieces = append(sw.pieces, piece{text: scrub(p.Value), quoted: true})
		case *syntax.DblQuoted:
			for _, inner := range p.Parts {
				if lit, ok := inner.(*syntax.Lit); ok {
					sw.pieces = append(sw.pieces, piece{text: unescapeDouble(lit.Value), quoted: true})
				} else {
					sw.pieces = append(sw.pieces, piece{text: w.source(inner), expansion: true})
				}
			}
			if len(p.Parts) == 0 {
				sw.pieces = append(sw.pieces, piece{quoted: true})
			}
		default: // parameter, command, arithmetic, process expansion, extglob
			sw.pieces = append(sw.pieces, piece{text: w.source(part), expansion: true})
		}
	}
	return sw
}

// renderAssigns renders "NAME=value" prefixes and declaration arguments.
func (w *bashWalker) renderAssigns(assigns []*syntax.Assign) []shWord {
	var out []shWord
	for _, a := range assigns {
		var sw shWord
		switch {
		case a.Naked && a.Name != nil:
			sw.pieces = []piece{{text: a.Name.Value}}
		case a.Naked && a.Value != nil:
			sw = w.render(a.Value)
		default:
			op := "="
			if a.Append {
				op = "+="
			}
			name := ""
			if a.Name != nil {
				name = a.Name.Value
			}
			sw.pieces = []piece{{text: name + op, quoted: true}}
			switch {
			case a.Value != nil:
				sw.pieces = append(sw.pieces, w.render(a.Value).pieces...)
			case a.Array != nil:
				sw.pieces = append(sw.pieces, piece{text: w.source(a.Array), expansion: true})
			}
		}
		out = append(out, sw)
	}
	return out
}

// source returns the text of node in the script being walked.
func (w *bashWalker) source(n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(w.src) || start > end {
		return "?"
	}
	return scrub(w.src[start:end])
}

// scrub replaces any Hole in input text so that only the preparer can put
// one in a Shape.
func scrub(s string) string {
	if !strings.ContainsRune(s, tool.Hole) {
		return s
	}
	return strings.ReplaceAll(s, string(tool.Hole), "\uFFFD")
}

// unescapeUnquoted removes the backslashes of unquoted text: "\x" is "x"
// and a backslash-newline disappears.
func unescapeUnquoted(s string) string {
	s = scrub(s)
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeDouble removes the backslashes that are special inside double
// quotes: before $, `, ", \ and newline.
func unescapeDouble(s string) string {
	s = scrub(s)
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
