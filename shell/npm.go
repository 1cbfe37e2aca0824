package shell

import (
	"slices"
	"strings"

	"github.com/airlockhq/airlock/tool"
)

// npmProgramOptions are npm's options whose value is a program npm runs
// (true: a command line), and the configuration files that may name one.
var npmProgramOptions = table[map[string]bool]{build: func() map[string]bool {
	return map[string]bool{"--script-shell": false, "--shell": false, "--editor": true,
		"--browser": false, "--git": false, "--call": true, "-c": true}
}}

// npmPrograms: npm runs scripts through --script-shell, "npm exec CMD",
// "npm x CMD" and "npx CMD" (bunx, pnpm and yarn exec and dlx) run CMD (--call/-c a command line), and a
// --userconfig or --globalconfig file may set any of those. An allowed
// "npm test" with one of them is not only "npm test".
func npmPrograms(w *bashWalker, name string, args []shWord, in dirSet) {
	w.npmConfigWrite(name, args, in)
	exec := name == "npx" || name == "bunx"
	commandSeen := false
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
		case (npmProgramOptions.get()[opt] || npmValueOptions.get()[opt]) && i+1 < len(args):
			i++
			v = args[i]
		}
		if shell, ok := npmProgramOptions.get()[opt]; ok && (eq || !v.empty()) {
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
			if commandSeen {
				continue // an operand of another command ("npm config set x y")
			}
			commandSeen = true
			sub := npmAliases.get()[a] // pnpm, yarn: the aliases; npm: its prefixes too
			if name == "npm" {
				sub = npmCommand(a)
			}
			if sub == "exec" || a == "exec" || a == "dlx" && name != "npm" {
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

// npmValueOptions are npm's options before the command that take the
// next word as their value.
var npmValueOptions = table[map[string]bool]{build: func() map[string]bool {
	return map[string]bool{"-w": true, "--workspace": true, "--prefix": true, "-C": true,
		"--registry": true, "--cache": true, "--userconfig": true, "--globalconfig": true, "--loglevel": true,
		"--script-shell": true, "--shell": true, "--tag": true, "-p": true, "--package": true, "--call": true, "-c": true}
}}

// npmCanonSubcommand returns npm's command (under its full name) and the
// other words in order: npm reads options anywhere.
func npmCanonSubcommand(args []shWord) ([]shWord, string) {
	for i := 0; i < len(args); i++ {
		a, lit := args[i].literal()
		switch {
		case !lit:
			return args, ""
		case npmValueOptions.get()[a]:
			i++
		case !strings.HasPrefix(a, "-"):
			if to := npmCommand(a); to != "" {
				a = to
			}
			return append(slices.Clip(args[:i]), args[i+1:]...), a
		}
	}
	return args, ""
}

// npmConfigWrite: "npm config set|delete|edit|fix" and "npm set" write
// npm's configuration: ~/.npmrc (or the --userconfig file), the
// project's .npmrc with --location=project, the global npmrc under npm's
// prefix with --global or --location=global. A value there can make
// every later npm command run a program (script-shell, git, editor),
// so it is a write the profile and the Write rules decide.
func (w *bashWalker) npmConfigWrite(name string, args []shWord, in dirSet) {
	if name != "npm" {
		return
	}
	rest, sub := npmCanonSubcommand(args)
	verb := ""
	var words []shWord
	for _, a := range rest {
		if t, lit := a.literal(); !lit || !strings.HasPrefix(t, "-") {
			words = append(words, a)
		}
	}
	switch sub {
	case "set":
		verb = "set"
	case "config":
		if len(words) > 0 {
			verb, _ = words[0].literal()
		}
	}
	switch verb {
	case "set", "delete", "edit", "fix", "rm", "del":
	default:
		return
	}
	location := "user"
	file := literalWord(w.home + "/.npmrc")
	for i := 0; i < len(args); i++ {
		a, lit := args[i].literal()
		if !lit {
			continue
		}
		opt, val, eq := strings.Cut(a, "=")
		if !eq && (opt == "--location" || opt == "-L" || opt == "--userconfig") && i+1 < len(args) {
			i++
			val, _ = args[i].literal()
		}
		switch {
		case opt == "--global" || opt == "-g":
			location = "global"
		case opt == "--location" || opt == "-L":
			location = val
		case opt == "--userconfig":
			file = args[i]
			if eq {
				file = args[i].slice(len(opt) + 1)
			}
		}
	}
	switch location {
	case "project":
		file = literalWord(".npmrc")
	case "global":
		// Under npm's prefix, which only npm knows.
		file = shWord{pieces: []piece{{text: "$(npm prefix -g)", expansion: true}, {text: "/etc/npmrc"}}}
	}
	w.pathRequirements(tool.KindFilesystemWrite, file, in, name+" config "+verb)
}
