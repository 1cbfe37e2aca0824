package shell

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/airlockhq/airlock/tool"
	"mvdan.cc/sh/v3/syntax"
)

// call handles one simple command: its substitutions, its requirement, the
// commands it runs on our behalf, the files it names, and "cd".
func (w *bashWalker) call(c *syntax.CallExpr, in dirSet) flow {
	for _, a := range c.Assigns {
		w.nested(a, in)
		w.recordAssign(a)
	}
	for _, a := range c.Args {
		w.nested(a, in)
	}
	if len(c.Args) == 0 {
		// Only assignments: nothing runs now, but a variable such as
		// GIT_SSH_COMMAND names what later commands run.
		for _, a := range w.renderAssigns(c.Assigns) {
			w.assignment(a, in)
		}
		w.runPending()
		return same(in)
	}
	words := w.renderWords(c.Args)
	w.emit(words, w.renderAssigns(c.Assigns), in, w.via, w.inherited)
	return w.cd(words, in)
}

// emit adds the command.execute requirement of words (prefixed by
// assignments), then what the command implies: the command a wrapper runs,
// a script given to a shell, the commands its options name, the files and
// hosts of a command that uses them. extra are operands a wrapper gives
// the command besides its words.
func (w *bashWalker) emit(words, assigns []shWord, in dirSet, via string, extra operandSource) {
	if len(words) == 0 {
		return
	}
	shown := words
	if extra.appended {
		// "xargs git": the operands xargs reads are words of the command
		// too ("git push"), only known at run time.
		shown = append(slices.Clip(words), shWord{pieces: []piece{{text: xargsInput, expansion: true}}})
	}
	all := append(append([]shWord(nil), assigns...), shown...)
	var text, shape strings.Builder
	hole := false
	argv := make([]string, len(shown))
	for i, sw := range all {
		if i > 0 {
			text.WriteByte(' ')
			shape.WriteByte(' ')
		}
		t := sw.text()
		text.WriteString(t)
		// In command position, unquoted globs and braces decide which
		// program runs, so they are unknown too.
		s := sw.shape(i == len(assigns))
		shape.WriteString(s)
		hole = hole || s != t
		if i >= len(assigns) {
			argv[i-len(assigns)] = t
		}
	}
	r := tool.Requirement{Kind: tool.KindCommandExecute, Target: text.String(), Argv: argv, Via: via}
	if len(assigns) == 0 {
		r.Canon = canonical(shown)
		r.Unseen = unseen(shown)
	}
	if hole {
		r.Shape = shape.String()
	}
	// Ordinary shell state (builtins.go): the assignments, the cd, the
	// export are no command a rule must allow.
	if len(assigns) > 0 && !inertAssignments(assigns) || len(assigns) == 0 && !inertBuiltin(shown) {
		w.add(r)
	}
	if len(assigns) > 0 {
		for _, a := range assigns {
			w.assignment(a, in) // "GIT_SSH_COMMAND=cmd git fetch" runs cmd
		}
		w.runPending()
		// "FOO=1 git push" also runs "git push": a deny or ask rule for
		// it must not be dodged by an assignment in front.
		w.emit(words, nil, in, "assignment", extra)
		return
	}
	name, ok := words[0].literal()
	if !ok {
		return
	}
	if words[0].hasGlob() {
		// "/usr/bin/cur?", "/usr/*/curl": bash runs what the pattern
		// matches; each match is decided as if written.
		for _, m := range globProgram(name, in) {
			w.emit(append([]shWord{literalWord(m)}, words[1:]...), nil, in, via, extra)
		}
		return
	}
	name = filepath.Base(name)
	for _, inner := range unwrap(name, words[1:]) {
		dirs := in
		if inner.dirUnknown {
			dirs = dirSet{unknown: true}
		}
		if inner.script != "" {
			w.script(inner.script, dirs, name+" -S")
			continue
		}
		if inner.line != nil {
			w.run(program{word: *inner.line, shell: true, via: name + inner.lineVia, in: dirs})
			continue
		}
		from := inner.extra
		if !from.appended && from.replace == "" {
			from = extra // "xargs sudo rm": rm still gets xargs' operands
		}
		w.emit(inner.words, nil, dirs, name, from)
	}
	if script, ok := shellScript(name, words[1:]); ok {
		saved := w.inherited
		if extra.replace != "" {
			w.inherited = operandSource{replace: extra.replace, with: extra.with}
		}
		w.script(script, in, name+" -c")
		w.inherited = saved
	} else if line, ok := dynamicScript(name, words[1:]); ok {
		// eval "$x", bash -c "$x": a script only known at run time.
		w.data.poisoned = true
		w.dataUnknown(line.text(), name)
	} else if shells.get()[name] && shellReadsInput(words[1:]) {
		// "echo ... | bash", "bash <<< ...", "sh -s": the commands come
		// from its input.
		w.data.poisoned = true
		w.dataUnknown("{"+name+" input}", name)
	}
	if f, ok := dataBuiltins.get()[name]; ok {
		f(w, name, extra.apply(words[1:]), in)
	}
	w.fileOperands(name, extra.apply(words[1:]), in)
	if f, ok := optionCommands.get()[name]; ok {
		f(w, name, words[1:], in)
	}
	w.runPending()
}

// operandSource describes operands a wrapper gives the command it runs
// that are not among the command's words, so that they become unresolved
// (or, for find, wild) requirements instead of being missed.
type operandSource struct {
	// appended: more operands follow the words (xargs without -I).
	appended bool
	// replace is the text that the wrapper replaces in the words (xargs
	// -I's string, find's "{}") with the pieces of with.
	replace string
	with    []piece
}

// xargsInput stands for the operands xargs reads from its input.
const xargsInput = "{xargs input}"

// fromInput reports whether sw stands for the operands xargs appends. It
// may be any number of words, so it is also whatever operand a command
// takes first (chmod's mode, grep's pattern) and every path after it.
func fromInput(sw shWord) bool {
	return len(sw.pieces) == 1 && sw.pieces[0].expansion && sw.pieces[0].text == xargsInput
}

// apply returns args with the wrapper's operands in place.
func (s operandSource) apply(args []shWord) []shWord {
	if s.replace != "" {
		out := make([]shWord, len(args))
		for i, a := range args {
			out[i] = replacePieces(a, s.replace, s.with)
		}
		args = out
	}
	if s.appended {
		args = append(slices.Clip(args), shWord{pieces: []piece{{text: xargsInput, expansion: true}}})
	}
	return args
}

// replacePieces replaces old in the known pieces of word with the pieces
// of with.
func replacePieces(word shWord, old string, with []piece) shWord {
	var out shWord
	for _, p := range word.pieces {
		if p.expansion || p.wild || !strings.Contains(p.text, old) {
			out.pieces = append(out.pieces, p)
			continue
		}
		parts := strings.Split(p.text, old)
		for i, part := range parts {
			if i > 0 {
				out.pieces = append(out.pieces, with...)
			}
			if part != "" {
				q := p
				q.text = part
				out.pieces = append(out.pieces, q)
			}
		}
	}
	return out
}

// cd follows "cd DIR" and "pushd DIR" for the commands after it.
func (w *bashWalker) cd(words []shWord, in dirSet) flow {
	name, _ := words[0].literal()
	switch name {
	case "cd", "pushd":
	case "popd":
		return same(dirSet{unknown: true})
	default:
		return same(in)
	}
	args := words[1:]
	for len(args) > 0 {
		a, ok := args[0].literal()
		if !ok || a == "--" {
			if ok {
				args = args[1:]
			}
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		args = args[1:] // -L, -P, -e, -@
	}
	var ok dirSet
	switch {
	case len(args) == 0:
		ok = dirSet{list: []string{w.home}}
	default:
		target, lit := args[0].literal()
		switch {
		case !lit || target == "-" || target == "":
			ok = dirSet{unknown: true}
		case filepath.IsAbs(target):
			ok = dirSet{list: []string{filepath.Clean(target)}}
		case in.unknown:
			ok = dirSet{unknown: true}
		default:
			for _, d := range in.list {
				ok.list = append(ok.list, filepath.Join(d, target))
			}
		}
	}
	return flow{ok: ok, any: in.union(ok)}
}

// maxGlobPrograms bounds the programs one glob in command position is
// decided as; the requirement with the pattern itself stays either way.
const maxGlobPrograms = 16

// globProgram returns what a program name with a glob matches where the
// command runs (bash sorts them and runs the first with the rest as its
// arguments; every match is returned, since any could come first once
// files change). A pattern in an unknown directory matches nothing known.
func globProgram(pattern string, in dirSet) []string {
	var dirs []string
	switch {
	case filepath.IsAbs(pattern):
		dirs = []string{""}
	case in.unknown:
		return nil
	default:
		dirs = in.list
	}
	var out []string
	for _, d := range dirs {
		p := pattern
		if d != "" {
			p = filepath.Join(d, pattern)
		}
		matches, err := filepath.Glob(p)
		if err != nil {
			continue
		}
		for _, m := range matches {
			switch {
			case d != "" && !strings.Contains(pattern, "/"):
				// "cur?" matching ./curl runs the curl found on PATH.
				m = filepath.Base(m)
			case d != "":
				if rel, err := filepath.Rel(d, m); err == nil {
					m = "./" + rel
				}
			}
			if len(out) == maxGlobPrograms {
				return out
			}
			out = append(out, m)
		}
	}
	return out
}
