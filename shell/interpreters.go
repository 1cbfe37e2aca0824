package shell

import (
	"strings"

	"github.com/airlockhq/airlock/tool"
)

// dynamicScript returns the script of eval or a shell's -c when it has a
// part only known at run time.
func dynamicScript(name string, args []shWord) (shWord, bool) {
	if name == "eval" {
		return joinLine(args), len(args) > 0
	}
	if !shells.get()[name] {
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

var shells = table[map[string]bool]{build: func() map[string]bool {
	return map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true, "busybox": false}
}}

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
	if !shells.get()[name] {
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

// perlOperands: perl -n and -p read their file operands and -i edits them
// in place. Without -e the first operand is the program file.
func perlOperands(w *bashWalker, name string, args []shWord, in dirSet) {
	inPlace, program, loop := false, false, false
	var ops []shWord
	for i := 0; i < len(args); i++ {
		a, lit := args[i].literal()
		if !lit || len(a) < 2 || a[0] != '-' {
			ops = args[i:]
			break
		}
		if a == "--" {
			ops = args[i+1:]
			break
		}
	cluster:
		for j := 1; j < len(a); j++ {
			switch a[j] {
			case 'n', 'p':
				loop = true
			case 'i':
				inPlace = true
				break cluster // the rest is the backup suffix
			case 'e', 'E', 'I', 'M', 'm':
				program = program || a[j] == 'e' || a[j] == 'E'
				if j == len(a)-1 {
					i++ // the argument is the next word
				}
				break cluster
			case 'x', 'd', 'D', 'C', 'V':
				break cluster // an optional argument in the same word
			}
		}
	}
	if !program && len(ops) > 0 {
		w.pathRequirements(tool.KindFilesystemRead, ops[0], in, name)
		ops = ops[1:]
	}
	if !loop && !inPlace {
		return // the operands are the program's own arguments
	}
	for _, op := range ops {
		w.pathRequirements(tool.KindFilesystemRead, op, in, name)
		if inPlace {
			w.pathRequirements(tool.KindFilesystemWrite, op, in, name)
		}
	}
}
