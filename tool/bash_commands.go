package tool

import (
	"path/filepath"
	"slices"
	"strings"

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
	r := Requirement{Kind: KindCommandExecute, Target: text.String(), Argv: argv, Via: via}
	if len(assigns) == 0 {
		r.Canon = canonical(shown)
	}
	if hole {
		r.Shape = shape.String()
	}
	w.add(r)
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
	} else if shells[name] && shellReadsInput(words[1:]) {
		// "echo ... | bash", "bash <<< ...", "sh -s": the commands come
		// from its input.
		w.data.poisoned = true
		w.dataUnknown("{"+name+" input}", name)
	}
	if f, ok := dataBuiltins[name]; ok {
		f(w, name, extra.apply(words[1:]), in)
	}
	w.fileOperands(name, extra.apply(words[1:]), in)
	if f, ok := optionCommands[name]; ok {
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

// wrapped is a command that another command runs.
type wrapped struct {
	words      []shWord
	dirUnknown bool // the wrapper changes directory (env -C, sudo -D)
	// script is a command line the wrapper splits itself (env -S).
	script string
	// line is a command line the wrapper hands to the shell (flock -c,
	// watch), known or not; lineVia follows the wrapper's name in Via.
	line    *shWord
	lineVia string
	// extra are the operands the wrapper adds (xargs, find -exec).
	extra operandSource
}

// wrapperOptions lists, for commands that run another command, the short
// options that take an argument. The command starts at the first operand
// (after "NAME=value" pairs for env and sudo).
var wrapperOptions = map[string]string{
	"sudo": "ugpChDrtUTR", "doas": "uC", "env": "uCS", "nohup": "", "setsid": "",
	"command": "", "builtin": "", "exec": "a", "nice": "n", "ionice": "cnpP",
	"stdbuf": "ioe", "time": "fo", "xargs": "IaEdLnPs", "chrt": "", "taskset": "",
	"timeout": "sk", "caffeinate": "", "unbuffer": "", "flock": "wE", "strace": "eoOpPsSu",
	"watch": "nd", "unshare": "SGRw", "chroot": "", "nsenter": "tSG", "prlimit": "p",
	"setpriv": "", "pkexec": "", "busybox": "", "toybox": "", "fakeroot": "", "eatmydata": "",
	"proxychains": "", "proxychains4": "", "torsocks": "", "dbus-run-session": "", "tini": "", "dumb-init": "",
	"tsocks": "", "catchsegv": "", "valgrind": "", "ltrace": "eopsuanADFlxw", "sshpass": "pfdP", "firejail": "",
}

// wrapperLongOptions lists the long options of wrappers whose argument
// may be the next word ("--user root").
var wrapperLongOptions = map[string][]string{
	"sudo":    {"user", "group", "host", "prompt", "close-from", "chdir", "role", "type", "command-timeout", "other-user", "chroot"},
	"env":     {"unset", "chdir", "split-string"},
	"nice":    {"adjustment"},
	"ionice":  {"class", "classdata", "pid", "pgid", "uid"},
	"stdbuf":  {"input", "output", "error"},
	"time":    {"format", "output"},
	"xargs":   {"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"},
	"timeout": {"signal", "kill-after"},
	"flock":   {"wait", "timeout", "conflict-exit-code"},
	"watch":   {"interval", "differences"},
	"unshare": {"propagation", "setgroups", "root", "wd", "setuid", "setgid", "map-user",
		"map-group", "map-users", "map-groups"},
	"chroot":  {"userspec", "groups"},
	"nsenter": {"target", "setuid", "setgid"},
	"prlimit": {"pid"},
	"setpriv": {"reuid", "regid", "ruid", "rgid", "euid", "egid", "groups", "inh-caps",
		"ambient-caps", "bounding-set", "securebits", "pdeathsig", "selinux-label",
		"apparmor-profile", "landlock-access", "landlock-rule"},
	"pkexec": {"user"},
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
	i, dirUnknown, watchExec := 0, false, false
	var extra operandSource
	if name == "xargs" {
		extra.appended = true
	}
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
			long, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			if name == "env" && (shortOption(a, opts, 'C') >= 0 || strings.HasPrefix(a, "--chdir")) ||
				name == "sudo" && (shortOption(a, opts, 'D') >= 0 || strings.HasPrefix(a, "--chdir")) ||
				name == "unshare" && (shortOption(a, opts, 'R') >= 0 || shortOption(a, opts, 'w') >= 0 ||
					strings.HasPrefix(a, "--root") || strings.HasPrefix(a, "--wd")) {
				dirUnknown = true
			}
			if name == "watch" && (shortOption(a, opts, 'x') >= 0 || a == "--exec") {
				watchExec = true
			}
			if name == "env" && (shortOption(a, opts, 'S') >= 0 || strings.HasPrefix(a, "--split-string")) {
				return envSplitString(args[i:])
			}
			if name == "xargs" {
				if r, ok := xargsReplace(args, i); ok {
					extra = operandSource{replace: r, with: []piece{{text: r, expansion: true}}}
				}
			}
			if takesArgument(a, opts) || strings.HasPrefix(a, "--") && !strings.Contains(a, "=") &&
				slices.Contains(wrapperLongOptions[name], long) {
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
	if name == "timeout" || name == "chrt" || name == "taskset" || name == "flock" || name == "chroot" {
		i++ // the duration, priority, CPU mask, lock file or new root
	}
	if name == "chroot" {
		dirUnknown = true // and every absolute path is below the new root
	}
	if i >= len(args) {
		return nil
	}
	if t, _ := args[i].literal(); name == "flock" && (t == "-c" || t == "--command") {
		if i+1 >= len(args) {
			return nil
		}
		return []wrapped{{line: &args[i+1], lineVia: " -c"}}
	}
	if name == "watch" && !watchExec {
		line := joinLine(args[i:]) // watch runs its words, joined, through sh -c
		return []wrapped{{line: &line}}
	}
	return []wrapped{{words: args[i:], dirUnknown: dirUnknown, extra: extra}}
}

// shortOption returns where the option word a, a cluster of short options
// of which opts take an argument, has option c ("-iS": 2), or -1.
func shortOption(a, opts string, c byte) int {
	if len(a) < 2 || a[0] != '-' || a[1] == '-' {
		return -1
	}
	for j := 1; j < len(a); j++ {
		if a[j] == c {
			return j
		}
		if strings.IndexByte(opts, a[j]) >= 0 {
			return -1 // the rest of the word is that option's argument
		}
	}
	return -1
}

// envSplitString returns the command of "env -S 'LINE' ARGS": env splits
// LINE into words itself, so it is parsed as a script with ARGS after it.
// args starts at the option word.
func envSplitString(args []shWord) []wrapped {
	a, _ := args[0].literal()
	var line string
	rest := args[1:]
	switch {
	case strings.HasPrefix(a, "--"):
		if _, v, ok := strings.Cut(a, "="); ok {
			line = v
		} else if len(rest) > 0 {
			line, _ = rest[0].literal()
			rest = rest[1:]
		}
	case shortOption(a, wrapperOptions["env"], 'S') < len(a)-1:
		line = a[shortOption(a, wrapperOptions["env"], 'S')+1:]
	case len(rest) > 0:
		var ok bool
		if line, ok = rest[0].literal(); !ok {
			// A command line only known at run time: env splits it.
			return []wrapped{{line: &rest[0], lineVia: " -S"}}
		}
		rest = rest[1:]
	}
	for _, r := range rest {
		t, ok := r.literal()
		if q, err := syntax.Quote(t, syntax.LangBash); ok && err == nil {
			t = q
		}
		line += " " + t
	}
	if strings.TrimSpace(line) == "" {
		return nil
	}
	return []wrapped{{script: line}}
}

// xargsReplace returns the replace string of xargs' option at args[i]:
// -I R, -IR, -i[R], --replace[=R] ("{}" when not given).
func xargsReplace(args []shWord, i int) (string, bool) {
	a, _ := args[i].literal()
	switch {
	case a == "-I" && i+1 < len(args):
		r, _ := args[i+1].literal()
		return r, r != ""
	case strings.HasPrefix(a, "-I"):
		return a[2:], true
	case a == "-i" || a == "--replace":
		return "{}", true
	case strings.HasPrefix(a, "-i"):
		return a[2:], true
	case strings.HasPrefix(a, "--replace="):
		return a[len("--replace="):], a != "--replace="
	}
	return "", false
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
// "{}" in them is a path find found: below the starting point when there
// is one known starting point, otherwise only known at run time.
func findExec(args []shWord) []wrapped {
	var out []wrapped
	found := []piece{{text: "{}", expansion: true}}
	if starts := findStarts(args); len(starts) == 1 && starts[0].known() {
		found = joinWords(starts[0], shWord{pieces: []piece{{text: "{}", wild: true}}}).pieces
	}
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
			inDir := a == "-execdir" || a == "-okdir"
			with := found
			if inDir {
				with = []piece{{text: "{}", expansion: true}}
			}
			out = append(out, wrapped{words: args[i+1 : j], dirUnknown: inDir,
				extra: operandSource{replace: "{}", with: with}})
		}
		i = j
	}
	return out
}

// dynamicScript returns the script of eval or a shell's -c when it has a
// part only known at run time.
func dynamicScript(name string, args []shWord) (shWord, bool) {
	if name == "eval" {
		return joinLine(args), len(args) > 0
	}
	if !shells[name] {
		return shWord{}, false
	}
	for i, a := range args {
		t, ok := a.literal()
		if !ok || len(t) < 2 || t[0] != '-' && t[0] != '+' {
			return shWord{}, false
		}
		if t[0] == '-' && t[1] != '-' && strings.Contains(t, "c") {
			if i+1 < len(args) && !args[i+1].known() {
				return args[i+1], true
			}
			return shWord{}, false
		}
	}
	return shWord{}, false
}

// shellReadsInput reports whether a shell with these arguments (and no
// -c) reads its commands from its input: -s, or no script operand.
func shellReadsInput(args []shWord) bool {
	for i := 0; i < len(args); i++ {
		t, ok := args[i].literal()
		switch {
		case !ok:
			return false
		case t == "--version" || t == "--help" || t == "-":
			return t == "-"
		case t == "--rcfile" || t == "--init-file" || t == "-o" || t == "+o" || t == "-O" || t == "+O":
			i++
		case strings.HasPrefix(t, "--"):
		case len(t) > 1 && (t[0] == '-' || t[0] == '+'):
			if t[0] == '-' && strings.Contains(t, "s") {
				return true
			}
		default:
			return false // a script file
		}
	}
	return true
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
