package tool

import (
	"strings"
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
	if !p.shell {
		w.emit(append([]shWord{p.word}, p.args...), nil, in, p.via, operandSource{})
		return
	}
	text, lit := p.word.literal()
	if !lit {
		// The shell parses the value: an expansion in it may hold any
		// command ("x; curl ..."), so the whole line is one Hole.
		t := p.word.text()
		w.add(Requirement{Kind: KindCommandExecute, Target: t, Argv: []string{t}, Via: p.via,
			Unresolved: true, Shape: string(Hole)})
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
	w.add(Requirement{Kind: KindCommandExecute, Target: what, Argv: []string{what},
		Shape: string(Hole), Unresolved: true, Via: via})
}

// optionCommands are the commands whose options or operands name other
// commands and that have no effects of their own modelled elsewhere (for
// ssh, scp, rsync, tar, nc and git see their operand functions).
var optionCommands = map[string]func(w *bashWalker, name string, args []shWord, in dirSet){
	"su": suPrograms, "runuser": suPrograms,
	"sg":     sgPrograms,
	"script": scriptPrograms,
	"trap":   trapPrograms,
	"sftp":   sftpPrograms,
	"sed":    sedPrograms, "gsed": sedPrograms,
	"parallel": parallelPrograms,
	"env":      envPrograms, "sudo": envPrograms, "doas": envPrograms, "export": envPrograms,
	"declare": envPrograms, "typeset": envPrograms, "local": envPrograms, "readonly": envPrograms,
	"npm": npmPrograms, "npx": npmPrograms, "pnpm": npmPrograms, "yarn": npmPrograms, "bunx": npmPrograms,
}

// envCommands are the variables that name a program other programs run:
// true for a command line run through the shell, false for a program name.
// Which commands read them cannot be listed (any script may run git), so
// setting one counts as running its value.
var envCommands = map[string]bool{
	"GIT_SSH_COMMAND": true, "GIT_PAGER": true, "GIT_EDITOR": true, "GIT_SEQUENCE_EDITOR": true,
	"GIT_EXTERNAL_DIFF": true, "PAGER": true, "MANPAGER": true, "SYSTEMD_PAGER": true,
	"EDITOR": true, "VISUAL": true, "SUDO_EDITOR": true, "LESSOPEN": true, "LESSCLOSE": true,
	"RSYNC_RSH": true,
	"GIT_SSH":   false, "GIT_ASKPASS": false, "SSH_ASKPASS": false, "SUDO_ASKPASS": false,
	"GIT_PROXY_COMMAND": false, "npm_config_script_shell": false, "NPM_CONFIG_SCRIPT_SHELL": false,
	"npm_config_shell": false, "NPM_CONFIG_SHELL": false,
}

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
	shell, ok := envCommands[name]
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

// envPrograms: "env NAME=value cmd", "sudo NAME=value cmd" and "export
// NAME=value" set variables as assignments in front of a command do.
func envPrograms(w *bashWalker, name string, args []shWord, in dirSet) {
	// Words after the command count too: "env make EDITOR=x" hands the
	// variable on to make's recipes.
	for _, a := range args {
		if lp := a.knownPrefix(); !strings.HasPrefix(lp, "-") {
			w.assignment(a, in)
		}
	}
}

var suSpec = optSpec{short: "cgGsw", long: []string{"command", "session-command", "group",
	"supp-group", "shell", "whitelist-environment"}}

// suPrograms: su and runuser run -c COMMAND through the shell -s names.
func suPrograms(w *bashWalker, name string, args []shWord, in dirSet) {
	parsed := suSpec.parse(args)
	for _, s := range values(parsed, "-s", "--shell") {
		w.runLater(program{word: s, via: name + " -s"}, in)
	}
	for _, c := range values(parsed, "-c", "--command", "--session-command") {
		w.runLater(program{word: c, shell: true, via: name + " -c"}, in)
	}
}

// sgPrograms: "sg GROUP [-c] COMMAND" runs COMMAND through /bin/sh.
func sgPrograms(w *bashWalker, name string, args []shWord, in dirSet) {
	if len(args) > 0 {
		if t, _ := args[0].literal(); t == "-" {
			args = args[1:]
		}
	}
	if len(args) < 2 {
		return
	}
	rest := args[1:]
	if t, _ := rest[0].literal(); t == "-c" {
		rest = rest[1:]
	}
	w.runLater(program{word: joinLine(rest), shell: true, via: name}, in)
}

var scriptSpec = optSpec{short: "cEIOBTm", long: []string{"command", "echo", "log-in", "log-out",
	"log-io", "log-timing", "logging-format", "output-limit"}}

// scriptPrograms: script -c COMMAND runs it through the shell.
func scriptPrograms(w *bashWalker, name string, args []shWord, in dirSet) {
	for _, c := range values(scriptSpec.parse(args), "-c", "--command") {
		w.runLater(program{word: c, shell: true, via: name + " -c"}, in)
	}
}

// trapPrograms: "trap ACTION SIGNAL..." runs ACTION when a signal comes;
// "-" and "" reset or ignore, a lone word is a signal.
func trapPrograms(w *bashWalker, name string, args []shWord, in dirSet) {
	if len(args) > 0 {
		if t, lit := args[0].literal(); lit && t == "--" {
			args = args[1:]
		} else if lit && strings.HasPrefix(t, "-") && t != "-" {
			return // -l, -p: they list
		}
	}
	if len(args) < 2 {
		return
	}
	if t, _ := args[0].literal(); t == "-" || isDigits(t) {
		return
	}
	w.runLater(program{word: args[0], shell: true, via: name}, in)
}

var sftpSpec = optSpec{short: "BbcDFiJloPRSs", exact: true}

// sftpPrograms: sftp passes -o to ssh, runs -S PROGRAM instead of ssh and
// -D COMMAND as a local server.
func sftpPrograms(w *bashWalker, name string, args []shWord, in dirSet) {
	parsed := sftpSpec.parse(args)
	for _, s := range values(parsed, "-S") {
		w.runLater(program{word: s, via: name + " -S"}, in)
	}
	for _, d := range values(parsed, "-D") {
		w.runLater(program{word: d, shell: true, via: name + " -D"}, in)
	}
	w.sshOptionPrograms(values(parsed, "-o"), nil, in)
}

// sshOptionPrograms adds the commands of ssh's -o ProxyCommand,
// LocalCommand (with PermitLocalCommand, which a configuration file may
// set) and KnownHostsCommand. tokens replaces their %h, %p, ... when the
// destination is known.
func (w *bashWalker) sshOptionPrograms(opts []shWord, tokens *strings.Replacer, in dirSet) {
	for _, o := range opts {
		key, value, ok := sshOption(o)
		if !ok {
			if !o.known() {
				// "-o $opt": it may be ProxyCommand=anything.
				w.dataUnknown(o.text(), "ssh -o")
			}
			continue
		}
		key = strings.ToLower(key)
		if sshCommandKeys[key] == "" {
			continue
		}
		if t, lit := value.literal(); lit {
			if t == "none" && key == "proxycommand" {
				continue
			}
			if tokens != nil && strings.Count(t, "%") <= 32 {
				value = literalWord(tokens.Replace(t))
			}
		}
		w.runLater(program{word: value, shell: true, via: "ssh -o " + sshCommandKeys[key]}, in)
	}
}

// sshCommandKeys are ssh's options whose value is a command line run
// here, by their lower-case names.
var sshCommandKeys = map[string]string{"proxycommand": "ProxyCommand", "localcommand": "LocalCommand",
	"knownhostscommand": "KnownHostsCommand"}

// sshOption splits an ssh -o argument, "Key=value" or "Key value", when
// its key is known.
func sshOption(o shWord) (key string, value shWord, ok bool) {
	lp := o.knownPrefix()
	i := strings.IndexAny(lp, "= \t")
	if i <= 0 {
		return "", shWord{}, false
	}
	j := i
	for j < len(lp) && (lp[j] == ' ' || lp[j] == '\t') {
		j++
	}
	if j < len(lp) && lp[j] == '=' {
		j++
		for j < len(lp) && (lp[j] == ' ' || lp[j] == '\t') {
			j++
		}
	}
	return lp[:i], o.slice(j), true
}

// sshTokens replaces the tokens of ProxyCommand (%h, %p, %n, %r, %%) with
// the destination's host, port and user, when they are plain names.
func sshTokens(dest, host, port, user string) *strings.Replacer {
	// A host name has at most 253 bytes: the text cannot grow much.
	plain := func(s string) bool {
		return s != "" && len(s) <= 253 &&
			strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_:[]") == ""
	}
	if !plain(host) || !plain(dest) || strings.Trim(port, "0123456789") != "" || port == "" || len(port) > 5 {
		return nil
	}
	pairs := []string{"%%", "%", "%h", host, "%p", port, "%n", dest}
	if plain(user) {
		pairs = append(pairs, "%r", user)
	}
	return strings.NewReplacer(pairs...)
}

// sshDestTokens are the tokens of an ssh destination written
// [user@]host, with the HostName and port options gave.
func sshDestTokens(dest shWord, hostName *shWord, port string) *strings.Replacer {
	d, lit := dest.literal()
	if !lit || strings.Contains(d, "://") {
		return nil
	}
	user, host := "", d
	if at := strings.LastIndexByte(d, '@'); at >= 0 {
		user, host = d[:at], d[at+1:]
	}
	target := host
	if hostName != nil {
		if target, lit = hostName.literal(); !lit {
			return nil
		}
	}
	return sshTokens(host, target, port, user)
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

// ncPrograms: traditional netcat runs -e PROGRAM and -c COMMAND (through
// /bin/sh); ncat runs -e/--exec COMMAND (split into words), -c/--sh-exec
// COMMAND (through /bin/sh) and --lua-exec FILE. OpenBSD's nc reads -c as
// a flag, but which nc runs is not known, so the word after -c counts as
// a command too.
func (w *bashWalker) ncPrograms(name string, args []shWord, parsed []arg, in dirSet) {
	if name == "ncat" {
		for _, a := range parsed {
			switch a.opt {
			case "-e", "--exec", "-c", "--sh-exec":
				w.runLater(program{word: a.value, shell: true, via: name + " " + a.opt}, in)
			case "--lua-exec":
				w.runLater(program{word: a.value, via: name + " " + a.opt}, in)
			}
		}
		return
	}
	for _, e := range values(parsed, "-e") {
		w.runLater(program{word: e, via: name + " -e"}, in)
	}
	spec := ncSpecs[name]
	spec.short += "c"
	for _, c := range values(spec.parse(args), "-c") {
		w.runLater(program{word: c, shell: true, via: name + " -c"}, in)
	}
}

// tarPrograms: GNU tar hands -I/--use-compress-program, --to-command,
// -F/--info-script, --new-volume-script and --checkpoint-action=exec= to
// /bin/sh -c, and runs --rsh-command as the remote shell.
func (w *bashWalker) tarPrograms(name string, parsed []arg, in dirSet) {
	for _, a := range parsed {
		if !a.hasValue {
			continue
		}
		switch a.opt {
		case "-I", "--use-compress-program", "--to-command", "-F", "--info-script", "--new-volume-script":
			w.runLater(program{word: a.value, shell: true, via: name + " " + a.opt}, in)
		case "--checkpoint-action":
			if strings.HasPrefix(a.value.knownPrefix(), "exec=") {
				w.runLater(program{word: a.value.slice(len("exec=")), shell: true, via: name + " " + a.opt}, in)
			}
		case "--rsh-command":
			w.runLater(program{word: a.value, via: name + " " + a.opt}, in)
		}
	}
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
