package shell

import (
	"strings"

	"github.com/airlockhq/airlock/tool"
)

// program is a command that another command runs from text it is given
// rather than from its own words: an option's value (ssh -o ProxyCommand=,
// tar --to-command=, git -c core.pager=), a variable (GIT_SSH_COMMAND=),
// or a string operand (su -c, flock -c, watch).
type program struct {
	word shWord
	// shell: word is a command line, handed to "sh -c" or split into
	// words by the program itself; otherwise it is one program's name.
	shell bool
	// args are the program's arguments, when word names a program.
	args []shWord
	// via names the option or variable ("ssh -o ProxyCommand").
	via string
	// inherit is what the program replaces in its command line for each
	// input (parallel's "{}").
	inherit operandSource
	// in is where it runs: where the command that runs it does.
	in dirSet
	// remote: it runs elsewhere (a container, a pod), where the paths
	// it names are not this machine's.
	remote bool
}

// runLater queues a program that the command being emitted runs, in
// directory in; emit runs the queue once the command's own requirements
// are in. (The functions of the registries that find programs cannot walk
// scripts themselves: a registry's value may not refer back to it.)
func (w *bashWalker) runLater(p program, in dirSet) {
	p.in = in
	w.pending = append(w.pending, p)
}

// runPending runs the queued programs.
func (w *bashWalker) runPending() {
	queued := w.pending
	w.pending = nil
	for _, p := range queued {
		w.run(p)
	}
}

// run adds the requirements of a program another command runs. A known
// command line is walked as a script, as "sh -c" is, so its redirections,
// files and hosts count too. A command line with an expansion cannot be
// split into commands before it runs: it is one unresolved command.execute,
// which deny and ask rules match and nothing allows without asking. A
// program name is a command of its own, with the holes any command has.
func (w *bashWalker) run(p program) {
	in := p.in
	if p.word.empty() {
		return
	}
	if p.remote {
		saved := w.remote
		w.remote = p.via
		defer func() { w.remote = saved }()
	}
	if !p.shell {
		w.emit(append([]shWord{p.word}, p.args...), nil, in, p.via, operandSource{})
		return
	}
	text, lit := p.word.literal()
	if !lit {
		// The shell parses the value: an expansion in it may hold any
		// command ("x; curl ..."), so the whole line is one Hole.
		t := p.word.text()
		w.add(tool.Requirement{Kind: tool.KindCommandExecute, Target: t, Argv: []string{t}, Via: p.via,
			Unresolved: true, Shape: string(tool.Hole)})
		return
	}
	savedVia, savedInherit := w.via, w.inherited
	w.via = p.via
	if p.inherit.replace != "" {
		w.inherited = p.inherit
	}
	w.script(text, in, p.via)
	w.via, w.inherited = savedVia, savedInherit
}

// runsUnknown adds a command that only the running program knows (sed's
// pattern space, parallel's input): a Hole that deny and ask rules match.
func (w *bashWalker) runsUnknown(what, via string) {
	w.add(tool.Requirement{Kind: tool.KindCommandExecute, Target: what, Argv: []string{what},
		Shape: string(tool.Hole), Unresolved: true, Via: via})
}

// optionCommands are the commands whose options or operands name other
// commands and that have no effects of their own modelled elsewhere (for
// ssh, scp, rsync, tar, nc and git see their operand functions).
var optionCommands = table[map[string]func(w *bashWalker, name string, args []shWord, in dirSet)]{build: func() map[string]func(w *bashWalker, name string, args []shWord, in dirSet) {
	return map[string]func(w *bashWalker, name string, args []shWord, in dirSet){
		"su": suPrograms, "runuser": suPrograms,
		"sg":     sgPrograms,
		"script": scriptPrograms,
		"trap":   trapPrograms,
		"sftp":   sftpPrograms,
		"sed":    sedPrograms, "gsed": sedPrograms,
		"parallel": parallelPrograms,
		"env":      envPrograms, "sudo": envPrograms, "doas": envPrograms, "export": envPrograms,
		"declare": envPrograms, "typeset": envPrograms, "local": envPrograms, "readonly": envPrograms,
		"docker": containerPrograms, "podman": containerPrograms, "nerdctl": containerPrograms,
		"kubectl": containerPrograms,
		"go":      goPrograms, "make": makePrograms, "gmake": makePrograms, "man": manPrograms,
		"npm": npmPrograms, "npx": npmPrograms, "pnpm": npmPrograms, "yarn": npmPrograms, "bunx": npmPrograms,
	}
}}

// assignment adds the program a "NAME=value" word sets, when NAME is one
// of envCommands.
func (w *bashWalker) assignment(word shWord, in dirSet) {
	lp := word.knownPrefix()
	eq := strings.IndexByte(lp, '=')
	if eq <= 0 {
		return
	}
	name := strings.TrimSuffix(lp[:eq], "+")
	if w.codeVariable(name, word.slice(eq+1), in) {
		return
	}
	shell, ok := envCommands.get()[name]
	if !ok {
		return
	}
	value := word.slice(eq + 1)
	if t, _ := value.literal(); name == "GIT_PAGER" && t == "cat" {
		return // git runs no pager for "cat"
	}
	if name != lp[:eq] { // NAME+=value appends to what NAME held
		value.pieces = append([]piece{{text: "$" + name, expansion: true}}, value.pieces...)
	}
	if strings.HasPrefix(name, "LESS") {
		// LESSOPEN="|cmd %s", "||cmd", "|-cmd": the marks are not the command.
		t := value.knownPrefix()
		value = value.slice(len(t) - len(strings.TrimLeft(strings.TrimLeft(t, "|"), "-")))
	}
	w.runLater(program{word: value, shell: shell, via: name}, in)
}

// joinLine joins words with spaces into one command line, as watch, sg
// and parallel do before they hand it to the shell.
func joinLine(words []shWord) shWord {
	var out shWord
	for i, wd := range words {
		if i > 0 {
			out.pieces = append(out.pieces, piece{text: " ", quoted: true})
		}
		out.pieces = append(out.pieces, wd.pieces...)
	}
	return out
}

// codeVariable handles the variables whose value bash itself runs as code:
// PROMPT_COMMAND, the prompts PS0 to PS4 (command substitutions in them
// run at each prompt, and PS4 at each command under "set -x"), and
// BASH_ENV and ENV, files a new shell sources.
func (w *bashWalker) codeVariable(name string, value shWord, in dirSet) bool {
	switch name {
	case "PROMPT_COMMAND":
		w.runLater(program{word: value, shell: true, via: name}, in)
	case "PS0", "PS1", "PS2", "PS3", "PS4":
		if t, ok := value.literal(); !ok || strings.ContainsAny(t, "$`") {
			w.dataUnknown(value.text(), name)
		}
	case "BASH_ENV", "ENV", "GIT_EXEC_PATH", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
		"GIT_CONFIG_PARAMETERS", "npm_config_userconfig", "NPM_CONFIG_USERCONFIG",
		"npm_config_globalconfig", "NPM_CONFIG_GLOBALCONFIG":
		// A file a shell sources; where git finds its programs and
		// configuration; npm's configuration (script-shell).
		if !value.empty() {
			w.dataUnknown(value.text(), name)
		}
	default:
		if strings.HasPrefix(name, "GIT_CONFIG_VALUE_") && !value.empty() {
			w.dataUnknown(value.text(), name)
			return true
		}
		return false
	}
	return true
}
