package shell

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// optSpec says how a command's options are written. Options it does not
// list take no argument, except after "=" in a long option.
type optSpec struct {
	// short lists the short options whose argument is the rest of the
	// word or, when the word ends there, the next word ("-ofile", "-o file").
	short string
	// long lists the long options (without "--") whose argument follows
	// "=" or is the next word.
	long []string
	// flags lists long options without an argument that a handler looks
	// for or whose name begins one in long, so that they and their
	// abbreviations resolve to themselves.
	flags []string
	// exact: long options must be written in full. GNU getopt and git
	// accept any unambiguous prefix ("--target" for "--target-directory").
	exact bool
	// inOrder: options end at the first operand, as for a command that
	// runs the rest (ssh), instead of GNU's options-anywhere.
	inOrder bool
	// operand, when set, reports a word that starts with "-" but is an
	// operand (chmod's "-x").
	operand func(string) bool
}

// arg is one argument after option parsing: an operand (opt "") or an
// option ("-f", "--file") with its value.
type arg struct {
	opt      string
	value    shWord
	hasValue bool
	// index is the position of the word (of the option, for an option
	// whose value is the next word) in the arguments.
	index int
}

// parse splits args into options and operands. A word with an expansion
// where an option could be is an operand: what it stands for is unknown,
// and as an operand it becomes an unresolved requirement.
func (s optSpec) parse(args []shWord) []arg {
	var out []arg
	endOpts := false
	for i := 0; i < len(args); i++ {
		word := args[i]
		lp, full := word.knownPrefix(), word.known()
		if endOpts || len(lp) < 2 || lp[0] != '-' || s.operand != nil && full && s.operand(lp) {
			out = append(out, arg{value: word, index: i})
			if s.inOrder {
				endOpts = true
			}
			continue
		}
		if lp == "--" && full {
			endOpts = true
			continue
		}
		if strings.HasPrefix(lp, "--") {
			name, _, eq := strings.Cut(lp[2:], "=")
			if !eq && !full {
				out = append(out, arg{value: word, index: i})
				continue
			}
			a := arg{opt: "--" + s.resolveLong(name), index: i}
			switch {
			case eq:
				a.value, a.hasValue = word.slice(len(name)+3), true
			case slices.Contains(s.long, a.opt[2:]) && i+1 < len(args):
				i++
				a.value, a.hasValue = args[i], true
			}
			out = append(out, a)
			continue
		}
		valued := false
		for j := 1; j < len(lp); j++ {
			a := arg{opt: "-" + lp[j:j+1], index: i}
			if strings.IndexByte(s.short, lp[j]) >= 0 {
				a.value, a.hasValue = word.slice(j+1), true
				if a.value.empty() && i+1 < len(args) {
					i++
					a.value = args[i]
				}
				out = append(out, a)
				valued = true
				break
			}
			out = append(out, a)
		}
		if !valued && !full {
			// "-r$X": more options that are only known at run time.
			out = append(out, arg{value: word, index: i})
		}
	}
	return out
}

// resolveLong returns the long option name abbreviates, when it is the
// prefix of exactly one option the spec knows.
func (s optSpec) resolveLong(name string) string {
	if s.exact || slices.Contains(s.long, name) || slices.Contains(s.flags, name) {
		return name
	}
	found := ""
	for _, l := range append(slices.Clip(s.long), s.flags...) {
		if strings.HasPrefix(l, name) {
			if found != "" {
				return name // ambiguous: the command refuses it
			}
			found = l
		}
	}
	if found == "" {
		return name
	}
	return found
}

// operands returns the operands of parsed arguments.
func operands(args []arg) []shWord {
	var out []shWord
	for _, a := range args {
		if a.opt == "" {
			out = append(out, a.value)
		}
	}
	return out
}

// values returns the values given to any of the options names.
func values(args []arg, names ...string) []shWord {
	var out []shWord
	for _, a := range args {
		if a.hasValue && slices.Contains(names, a.opt) {
			out = append(out, a.value)
		}
	}
	return out
}

// has reports whether any of the options names was given.
func has(args []arg, names ...string) bool {
	for _, a := range args {
		if a.opt != "" && slices.Contains(names, a.opt) {
			return true
		}
	}
	return false
}

// known reports whether the whole word is known before the command runs.
func (sw shWord) known() bool {
	_, ok := sw.literal()
	return ok
}

// knownPrefix is the text of the word up to its first expansion or wild
// part.
func (sw shWord) knownPrefix() string {
	var b strings.Builder
	for _, p := range sw.pieces {
		if p.expansion || p.wild {
			break
		}
		b.WriteString(p.text)
	}
	return b.String()
}

// empty reports whether the word is the empty string.
func (sw shWord) empty() bool {
	for _, p := range sw.pieces {
		if p.text != "" || p.expansion || p.wild {
			return false
		}
	}
	return true
}

// slice drops the first n bytes of the word, which must lie in its known
// prefix.
func (sw shWord) slice(n int) shWord {
	var out shWord
	for _, p := range sw.pieces {
		switch {
		case n == 0:
			out.pieces = append(out.pieces, p)
		case n >= len(p.text) && !p.expansion && !p.wild:
			n -= len(p.text)
		default:
			p.text = p.text[n:]
			n = 0
			out.pieces = append(out.pieces, p)
		}
	}
	return out
}

// lastSlash finds the last "/" in the word's known text that is not at
// its end: the piece and byte index, or -1.
func (sw shWord) lastSlash() (int, int) {
	for i := len(sw.pieces) - 1; i >= 0; i-- {
		p := sw.pieces[i]
		if p.expansion || p.wild {
			continue
		}
		text := p.text
		if i == len(sw.pieces)-1 {
			text = strings.TrimRight(text, "/")
		}
		if j := strings.LastIndexByte(text, '/'); j >= 0 {
			return i, j
		}
	}
	return -1, -1
}

// base is the word's last path element, as basename(1) gives it.
func (sw shWord) base() shWord {
	out := sw.trimTrailingSlashes()
	i, j := out.lastSlash()
	if i < 0 {
		return out
	}
	rest := out.pieces[i]
	rest.text = rest.text[j+1:]
	return shWord{pieces: append([]piece{rest}, out.pieces[i+1:]...)}
}

// dir is the word without its last path element, as dirname(1) gives it.
func (sw shWord) dir() shWord {
	out := sw.trimTrailingSlashes()
	i, j := out.lastSlash()
	if i < 0 {
		return literalWord(".")
	}
	head := slices.Clone(out.pieces[:i+1])
	head[i].text = head[i].text[:j]
	if i == 0 && j == 0 {
		head[0].text = "/"
	}
	return shWord{pieces: head}
}

func (sw shWord) trimTrailingSlashes() shWord {
	n := len(sw.pieces)
	if n == 0 || sw.pieces[n-1].expansion || sw.pieces[n-1].wild {
		return sw
	}
	out := shWord{pieces: slices.Clone(sw.pieces)}
	if t := strings.TrimRight(out.pieces[n-1].text, "/"); t != "" || n > 1 {
		out.pieces[n-1].text = t
	}
	return out
}

// literalWord is a word of known text whose glob characters are literal.
func literalWord(s string) shWord { return shWord{pieces: []piece{{text: s, quoted: true}}} }

// joinWords is dir/name as one word; an absolute name stands alone.
func joinWords(dir, name shWord) shWord {
	if strings.HasPrefix(name.knownPrefix(), "/") {
		return name
	}
	pieces := slices.Clone(dir.trimTrailingSlashes().pieces)
	if dir.text() != "/" {
		pieces = append(pieces, piece{text: "/", quoted: true})
	}
	return shWord{pieces: append(pieces, name.pieces...)}
}

// chdir is where a command works after changing to dir (git -C, tar -C):
// an absolute dir, or dir below each of in.
func chdir(in dirSet, dir shWord) dirSet {
	d, ok := dir.literal()
	switch {
	case !ok || d == "":
		return dirSet{unknown: true}
	case filepath.IsAbs(d):
		return dirSet{list: []string{filepath.Clean(d)}}
	case in.unknown:
		return in
	}
	out := dirSet{}
	for _, x := range in.list {
		out.list = append(out.list, filepath.Join(x, d))
	}
	return out
}

// isDir reports whether the word names a directory: by its form (a
// trailing "/", "." or "..") or, failing that, because one exists there
// now in one of the directories the command may run in.
func isDir(word shWord, in dirSet) bool {
	text, ok := word.literal()
	if !ok {
		return false
	}
	b := filepath.Base(text)
	if strings.HasSuffix(text, "/") || b == "." || b == ".." {
		return true
	}
	paths := []string{text}
	if !filepath.IsAbs(text) {
		paths = nil
		for _, d := range in.list {
			paths = append(paths, filepath.Join(d, text))
		}
	}
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return true
		}
	}
	return false
}
