package shell

import (
	"strings"

	"github.com/airlockhq/airlock/tool"
)

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

var parallelSpec = optSpec{short: "aCdEIjLNnPSs", inOrder: true, long: []string{"arg-file", "colsep",
	"delimiter", "eof", "jobs", "max-lines", "max-args", "max-replace-args", "max-procs", "sshlogin",
	"sshloginfile", "slf", "max-chars", "joblog", "results", "res", "tmpdir", "workdir", "wd", "env",
	"halt", "retries", "timeout", "delay", "memfree", "load", "nice", "basefile", "bf", "return",
	"transferfile", "tf", "tagstring", "ssh", "block", "recstart", "recend", "header", "arg-sep",
	"arg-file-sep", "sqlmaster", "sqlworker", "template", "tmux", "plus"}}

// parallelPrograms: GNU parallel joins its command's words into a line
// for the shell, with "{}" (or -I's string) standing for each input and
// added at the end when the line has none. Without a command, the
// arguments after ":::" are the commands, or each line of its input is.
func parallelPrograms(w *bashWalker, name string, args []shWord, in dirSet) {
	parsed := parallelSpec.parse(args)
	for _, s := range values(parsed, "--ssh") {
		w.runLater(program{word: s, shell: true, via: name + " --ssh"}, in)
	}
	replace := "{}"
	for _, r := range values(parsed, "-I") {
		replace, _ = r.literal()
	}
	var command, sources []shWord
	for _, a := range parsed {
		if a.opt != "" {
			continue
		}
		t, _ := a.value.literal()
		if strings.HasPrefix(t, ":::") || strings.HasPrefix(t, "::::") {
			sources = args[a.index:]
			break
		}
		command = append(command, a.value)
	}
	if len(command) == 0 {
		if len(sources) == 0 || strings.HasPrefix(sources[0].text(), "::::") {
			w.runsUnknown("{parallel input}", name) // commands from its input or files
			return
		}
		for _, s := range sources[1:] {
			if t, _ := s.literal(); strings.HasPrefix(t, ":::") {
				break
			}
			w.runLater(program{word: s, shell: true, via: name}, in)
		}
		return
	}
	line := joinLine(command)
	if replace != "" && !strings.Contains(line.text(), replace) && !strings.Contains(line.text(), "{") {
		line.pieces = append(line.pieces, piece{text: " " + replace, quoted: true})
	}
	p := program{word: line, shell: true, via: name}
	if replace != "" {
		p.inherit = operandSource{replace: replace, with: []piece{{text: replace, expansion: true}}}
	}
	w.runLater(p, in)
}

// findStarts returns find's starting points: the operands before the
// first expression word ("." when there are none).
func findStarts(args []shWord) []shWord {
	var starts []shWord
	for i := 0; i < len(args); i++ {
		a, lit := args[i].literal()
		if lit && (a == "-H" || a == "-L" || a == "-P" || strings.HasPrefix(a, "-O")) && len(starts) == 0 {
			continue
		}
		if lit && a == "-D" && len(starts) == 0 {
			i++
			continue
		}
		if lit && (strings.HasPrefix(a, "-") && len(a) > 1 || a == "(" || a == "!" || a == ",") {
			break
		}
		starts = append(starts, args[i])
	}
	if len(starts) == 0 {
		starts = []shWord{literalWord(".")}
	}
	return starts
}

// findOperands: find -delete removes what it finds below its starting
// points; -fprint and its kin write a file.
func findOperands(w *bashWalker, name string, args []shWord, in dirSet) {
	for i := 0; i < len(args); i++ {
		switch t, _ := args[i].literal(); t {
		case "-delete":
			for _, s := range findStarts(args) {
				w.pathRequirements(tool.KindFilesystemWrite, s, in, name)
			}
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 < len(args) {
				w.pathRequirements(tool.KindFilesystemWrite, args[i+1], in, name)
			}
		case "-exec", "-execdir", "-ok", "-okdir":
			// The command's words are its own (see findExec).
			for i+1 < len(args) {
				i++
				if t, _ := args[i].literal(); t == ";" || t == "+" {
					break
				}
			}
		}
	}
}
