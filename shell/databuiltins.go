package shell

import "strings"

// dataBuiltins are the builtins that evaluate their operands as numbers
// or names, or run code from data.
var dataBuiltins = table[map[string]func(w *bashWalker, name string, args []shWord, in dirSet)]{build: func() map[string]func(w *bashWalker, name string, args []shWord, in dirSet) {
	return map[string]func(w *bashWalker, name string, args []shWord, in dirSet){
		"test": testData, "[": testData,
		"printf": printfData,
		"shift":  numberData, "exit": numberData, "return": numberData, "ulimit": numberData,
		"break": numberData, "continue": numberData,
		"read": readData, "mapfile": mapfileData, "readarray": mapfileData,
		"getopts": getoptsData, "wait": waitData, "unset": unsetData,
		"source": sourceData, ".": sourceData,
		"alias": aliasData,
	}
}}

// testData: test and [ evaluate the operands of -eq, -ne, -lt, -le, -gt
// and -ge as arithmetic, and -v's operand as a name.
func testData(w *bashWalker, name string, args []shWord, in dirSet) {
	for i, a := range args {
		op, _ := a.literal()
		switch op {
		case "-eq", "-ne", "-lt", "-le", "-gt", "-ge":
			if i > 0 {
				w.arithWord(args[i-1], name+" "+op)
			}
			if i+1 < len(args) {
				w.arithWord(args[i+1], name+" "+op)
			}
		case "-v":
			if i+1 < len(args) {
				w.nameWord(args[i+1], name+" -v")
			}
		}
	}
}

// printfData: printf -v NAME assigns NAME, and the numeric conversions
// (%d, %i, %u, %x, %o, %c, %e, %f, %g, ...) evaluate their arguments as
// arithmetic; %s, %b and %q do not.
func printfData(w *bashWalker, name string, args []shWord, in dirSet) {
	if len(args) >= 2 {
		if t, _ := args[0].literal(); t == "-v" {
			w.nameWord(args[1], "printf -v")
			if v, ok := assignedName(args[1]); ok {
				w.recordUnknown(v)
			} else {
				w.data.poisoned = true
			}
			args = args[2:]
		}
	}
	if len(args) > 0 {
		if t, _ := args[0].literal(); t == "--" {
			args = args[1:]
		}
	}
	if len(args) < 2 {
		return
	}
	if f, ok := args[0].literal(); ok && !numericFormat(f) {
		return
	}
	for _, a := range args[1:] {
		w.arithWord(a, name)
	}
}

// numericFormat reports whether a printf format has a conversion other
// than %s, %b, %q and %%.
func numericFormat(f string) bool {
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(f) && strings.IndexByte("-+ #0123456789.*'", f[j]) >= 0 {
			j++
		}
		if j < len(f) && strings.IndexByte("sbq%", f[j]) < 0 {
			return true
		}
		i = j
	}
	return false
}

// numberData: shift, exit, return, break, continue and ulimit evaluate
// their numbers as arithmetic.
func numberData(w *bashWalker, name string, args []shWord, in dirSet) {
	for _, a := range args {
		if t, ok := a.literal(); ok && strings.HasPrefix(t, "-") {
			continue
		}
		w.arithWord(a, name)
	}
}

// builtinArgs walks the words of a builtin that takes single-letter
// options: each option word's first letter in valued is passed to opt with
// its value (the rest of the word, or the next word); operands go to
// operand. Option words with no valued letter are skipped.
func builtinArgs(args []shWord, valued string, opt func(flag byte, v shWord), operand func(shWord)) {
	for i := 0; i < len(args); i++ {
		t, lit := args[i].literal()
		if !lit || len(t) < 2 || t[0] != '-' {
			operand(args[i])
			continue
		}
		j := strings.IndexAny(t, valued)
		if j < 0 {
			continue
		}
		var v shWord
		if j+1 < len(t) {
			v = args[i].slice(j + 1)
		} else if i+1 < len(args) {
			i++
			v = args[i]
		}
		opt(t[j], v)
	}
}

// readData: read assigns the names it is given (REPLY by default) and -a
// ARRAY from its input; -t, -n, -N and -u are numbers.
func readData(w *bashWalker, name string, args []shWord, in dirSet) {
	names := 0
	builtinArgs(args, "adpinNtu", func(flag byte, v shWord) {
		switch flag {
		case 'a':
			w.assignsInput(v, name)
			names++
		case 't', 'n', 'N', 'u':
			w.arithWord(v, name+" -"+string(flag))
		}
	}, func(a shWord) {
		w.assignsInput(a, name)
		names++
	})
	if names == 0 {
		w.recordUnknown("REPLY")
	}
}

// assignsInput notes a name a builtin assigns from its input.
func (w *bashWalker) assignsInput(sw shWord, via string) {
	w.nameWord(sw, via)
	if v, ok := assignedName(sw); ok {
		w.recordUnknown(v)
	} else {
		w.data.poisoned = true
	}
}

// mapfileData: mapfile assigns its array (MAPFILE) from its input and
// runs -C CALLBACK, a command line, every -c lines.
func mapfileData(w *bashWalker, name string, args []shWord, in dirSet) {
	names := 0
	builtinArgs(args, "dnOsucC", func(flag byte, v shWord) {
		switch flag {
		case 'C':
			w.runLater(program{word: v, shell: true, via: name + " -C"}, in)
		case 'n', 'O', 's', 'u', 'c':
			w.arithWord(v, name+" -"+string(flag))
		}
	}, func(a shWord) {
		w.assignsInput(a, name)
		names++
	})
	if names == 0 {
		w.recordUnknown("MAPFILE")
	}
}

// getoptsData: getopts OPTSTRING NAME assigns NAME and OPTARG.
func getoptsData(w *bashWalker, name string, args []shWord, in dirSet) {
	w.recordUnknown("OPTARG")
	if len(args) >= 2 {
		w.assignsInput(args[1], name)
	}
}

// waitData: wait -p NAME assigns NAME a process id.
func waitData(w *bashWalker, name string, args []shWord, in dirSet) {
	for i, a := range args {
		if t, _ := a.literal(); t == "-p" && i+1 < len(args) {
			w.nameWord(args[i+1], name+" -p")
		}
	}
}

// unsetData: unset evaluates the subscript of each name.
func unsetData(w *bashWalker, name string, args []shWord, in dirSet) {
	for _, a := range args {
		if t, ok := a.literal(); ok && strings.HasPrefix(t, "-") {
			continue
		}
		w.nameWord(a, name)
	}
}

// sourceData: source and . run the commands of a file in this shell; the
// parser cannot see them, and they may assign any variable.
func sourceData(w *bashWalker, name string, args []shWord, in dirSet) {
	w.data.poisoned = true
	if len(args) == 0 {
		return
	}
	w.dataUnknown(joinLine(args).text(), name)
}

// aliasData: "alias NAME=VALUE" makes NAME run VALUE, a command line
// (with shopt -s expand_aliases, or in an interactive shell).
func aliasData(w *bashWalker, name string, args []shWord, in dirSet) {
	for _, a := range args {
		lp := a.knownPrefix()
		eq := strings.IndexByte(lp, '=')
		if eq <= 0 {
			continue
		}
		w.runLater(program{word: a.slice(eq + 1), shell: true, via: name + " " + lp[:eq]}, in)
	}
}
