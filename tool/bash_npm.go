package tool

import (
	"strings"
)

// npmProgramOptions are npm's options whose value is a program npm runs
// (true: a command line), and the configuration files that may name one.
var npmProgramOptions = map[string]bool{"--script-shell": false, "--shell": false, "--editor": true,
	"--browser": false, "--git": false, "--call": true, "-c": true}

// npmPrograms: npm runs scripts through --script-shell, "npm exec CMD",
// "npm x CMD" and "npx CMD" (bunx, pnpm and yarn exec and dlx) run CMD (--call/-c a command line), and a
// --userconfig or --globalconfig file may set any of those. An allowed
// "npm test" with one of them is not only "npm test".
func npmPrograms(w *bashWalker, name string, args []shWord, in dirSet) {
	exec := name == "npx" || name == "bunx"
	var command []shWord
	for i := 0; i < len(args); i++ {
		a, lit := args[i].literal()
		if !lit {
			continue
		}
		if a == "--" {
			if exec && len(command) == 0 {
				command = args[i+1:]
			}
			break
		}
		opt, _, eq := strings.Cut(a, "=")
		var v shWord
		switch {
		case eq:
			v = args[i].slice(len(opt) + 1)
		case (npmProgramOptions[opt] || npmValueOptions[opt]) && i+1 < len(args):
			i++
			v = args[i]
		}
		if shell, ok := npmProgramOptions[opt]; ok && (eq || !v.empty()) {
			w.runLater(program{word: v, shell: shell, via: name + " " + opt}, in)
			if opt == "--call" || opt == "-c" {
				exec = false // the command line is the command
			}
			continue
		}
		if opt == "--userconfig" || opt == "--globalconfig" || opt == "--node-options" {
			w.dataUnknown(v.text(), name+" "+opt)
			continue
		}
		if strings.HasPrefix(a, "-") || eq {
			continue
		}
		if !exec {
			if sub := npmCanonAliases[a]; sub == "exec" || a == "exec" || a == "dlx" && name != "npm" {
				exec = true
				continue
			}
			// Another command (test, run, ...): its words are its own,
			// but a later option can still name a program.
			continue
		}
		if len(command) == 0 {
			command = args[i:]
			break
		}
	}
	if exec && len(command) > 0 {
		w.runLater(program{word: command[0], args: command[1:], via: name + " exec"}, in)
	}
}
