package tool

import (
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// call handles one simple command: its substitutions, its requirement, the
// commands it runs on our behalf, the files it names, and "cd".
func (w *bashWalker) call(c *syntax.CallExpr, in dirSet) flow {
	for _, a := range c.Assigns {
		w.nested(a, in)
	}
	for _, a := range c.Args {
		w.nested(a, in)
	}
	if len(c.Args) == 0 {
		return same(in) // only assignments: nothing runs
	}
	words := w.renderWords(c.Args)
	w.emit(words, w.renderAssigns(c.Assigns), in, "")
	return w.cd(words, in)
}

// emit adds the command.execute requirement of words (prefixed by
// assignments), then what the command implies: the command a wrapper runs,
// a script given to a shell, the files of a file command.
func (w *bashWalker) emit(words, assigns []shWord, in dirSet, via string) {
	if len(words) == 0 {
		return
	}
	all := append(append([]shWord(nil), assigns...), words...)
	var text, shape strings.Builder
	hole := false
	argv := make([]string, len(words))
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
	r := Requirement{Kind: KindCommandExecute, Target: text.String(), Argv: argv, Via: via}
	if hole {
		r.Shape = shape.String()
	}
	w.add(r)
	if len(assigns) > 0 {
		// "FOO=1 git push" also runs "git push": a deny or ask rule for
		// it must not be dodged by an assignment in front.
		w.emit(words, nil, in, "assignment")
		return
	}
	name, ok := words[0].literal()
	if !ok {
		return
	}
	name = filepath.Base(name)
	for _, inner := range unwrap(name, words[1:]) {
		dirs := in
		if inner.dirUnknown {
			dirs = dirSet{unknown: true}
		}
		w.emit(inner.words, nil, dirs, name)
	}
	if script, ok := shellScript(name, words[1:]); ok {
		w.script(script, in, name+" -c")
	}
	w.fileOperands(name, words[1:], in)
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

// wrapped is a command that another command runs.
type wrapped struct {
	words      []shWord
	dirUnknown bool // the wrapper changes directory (env -C)
}

// wrapperOptions lists, for commands that run another command, the short
// options that take an argument. The command starts at the first operand
// (after "NAME=value" pairs for env and sudo).
var wrapperOptions = map[string]string{
	"sudo": "ugpChDrtUT", "doas": "uC", "env": "uCS", "nohup": "", "setsid": "",
	"command": "", "builtin": "", "exec": "a", "nice": "n", "ionice": "cnp",
	"stdbuf": "ioe", "time": "fo", "xargs": "IaEdLlnPs", "chrt": "", "taskset": "",
	"timeout": "sk", "caffeinate": "", "unbuffer": "", "flock": "wEc", "strace": "eoOpPsSu",
	"watch": "nd",
}

// unwrap returns the commands a wrapper (sudo, env, xargs, timeout,
// find -exec, ...) runs.
func unwrap(name string, args []shWord) []wrapped {
	if name == "find" {
		return findExec(args)
	}
	opts, ok := wrapperOptions[name]
	if !ok {
		return nil
	}
	i, dirUnknown := 0, false
	for i < len(args) {
		a, lit := args[i].literal()
		if !lit {
			break
		}
		if a == "--" {
			i++
			break
		}
		if len(a) > 1 && a[0] == '-' {
			if name == "command" && (a == "-v" || a == "-V") {
				return nil // only looks the name up
			}
			if name == "env" && (a == "-C" || strings.HasPrefix(a, "--chdir")) {
				dirUnknown = true
			}
			if takesArgument(a, opts) {
				i++
			}
			i++
			continue
		}
		if (name == "env" || name == "sudo") && strings.Contains(a, "=") {
			i++
			continue
		}
		break
	}
	if name == "timeout" || name == "chrt" || name == "taskset" || name == "flock" {
		i++ // the duration, priority, CPU mask or lock file
	}
	if i >= len(args) {
		return nil
	}
	return []wrapped{{words: args[i:], dirUnknown: dirUnknown}}
}

// takesArgument reports whether the option word a (a short option cluster)
// ends in an option of opts whose argument is the next word.
func takesArgument(a, opts string) bool {
	if strings.HasPrefix(a, "--") {
		return false
	}
	for j := 1; j < len(a); j++ {
		if strings.IndexByte(opts, a[j]) >= 0 {
			return j == len(a)-1
		}
	}
	return false
}

// findExec returns the commands of find's -exec, -execdir, -ok and -okdir.
func findExec(args []shWord) []wrapped {
	var out []wrapped
	for i := 0; i < len(args); i++ {
		a, _ := args[i].literal()
		if a != "-exec" && a != "-execdir" && a != "-ok" && a != "-okdir" {
			continue
		}
		j := i + 1
		for j < len(args) {
			if t, _ := args[j].literal(); t == ";" || t == "+" {
				break
			}
			j++
		}
		if j > i+1 {
			out = append(out, wrapped{words: args[i+1 : j], dirUnknown: a == "-execdir" || a == "-okdir"})
		}
		i = j
	}
	return out
}

var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true, "busybox": false}

// shellScript returns the script a shell runs from its arguments
// ("bash -c 'a; b'", "eval a b"), when that script is literal text.
func shellScript(name string, args []shWord) (string, bool) {
	if name == "eval" {
		parts := make([]string, 0, len(args))
		for _, a := range args {
			t, ok := a.literal()
			if !ok {
				return "", false
			}
			parts = append(parts, t)
		}
		return strings.Join(parts, " "), len(parts) > 0
	}
	if !shells[name] {
		return "", false
	}
	for i, a := range args {
		t, ok := a.literal()
		if !ok || len(t) < 2 || t[0] != '-' && t[0] != '+' {
			return "", false
		}
		if t[0] == '-' && t[1] != '-' && strings.Contains(t, "c") {
			if i+1 < len(args) {
				return args[i+1].literal()
			}
			return "", false
		}
	}
	return "", false
}
