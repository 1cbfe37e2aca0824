package shell

import (
	"strings"

	"github.com/airlockhq/airlock/tool"
)

// gitConfigCommands are the configuration keys whose value git runs:
// true for a command line it hands to the shell, false for a program
// name. "*" stands for a subsection (a driver, tool or remote name).
var gitConfigCommands = table[map[string]bool]{build: func() map[string]bool {
	return map[string]bool{
		"core.sshcommand": true, "core.editor": true, "sequence.editor": true,
		"core.fsmonitor": true, "diff.external": true, "core.alternaterefscommand": true,
		"uploadpack.packobjectshook": true, "interactive.difffilter": true, "sendemail.sendmailcmd": true,
		"sendemail.tocmd": true, "sendemail.cccmd": true, "gpg.*.defaultkeycommand": true,
		"diff.*.command": true, "diff.*.textconv": true, "merge.*.driver": true, "filter.*.clean": true,
		"filter.*.smudge": true, "filter.*.process": true, "difftool.*.cmd": true, "mergetool.*.cmd": true,
		"browser.*.cmd": true, "remote.*.uploadpack": true, "remote.*.receivepack": true,
		"core.askpass": false, "core.gitproxy": false, "gpg.program": false, "gpg.*.program": false,
		"difftool.*.path": false, "mergetool.*.path": false,
	}
}}

// gitConfigProgram returns the program git runs for the configuration
// key set to value, if it runs one.
func gitConfigProgram(key string, value shWord) (program, bool) {
	section, rest, _ := strings.Cut(strings.ToLower(key), ".")
	name, sub := rest, ""
	if j := strings.LastIndexByte(rest, '.'); j >= 0 {
		sub, name = rest[:j], rest[j+1:]
	}
	t, lit := value.literal()
	if lit && strings.TrimSpace(t) == "" {
		return program{}, false // unset: git's default
	}
	bang := strings.HasPrefix(value.knownPrefix(), "!")
	switch {
	case section == "alias" && sub == "":
		if bang {
			return program{word: value.slice(1), shell: true}, true
		}
		// Another git command line, which may set more of these keys.
		return program{word: prefixed("git ", value), shell: true}, true
	case section == "credential" && name == "helper":
		if bang {
			return program{word: value.slice(1), shell: true}, true
		}
		if strings.HasPrefix(value.knownPrefix(), "/") {
			return program{word: value, shell: true}, true
		}
		return program{word: prefixed("git credential-", value), shell: true}, true
	case section == "submodule" && sub != "" && name == "update":
		return program{word: value.slice(1), shell: true}, bang
	case section == "remote" && sub != "" && name == "vcs":
		return program{word: prefixed("git-remote-", value)}, true
	case section == "pager" && sub == "", section == "core" && sub == "" && name == "pager":
		// A boolean turns the pager on or off; git runs none for "cat".
		if lit && (isGitBool(t) && section == "pager" || t == "cat") {
			return program{}, false
		}
		return program{word: value, shell: true}, true
	}
	if section == "include" && sub == "" && name == "path" || section == "includeif" && name == "path" ||
		section == "core" && sub == "" && name == "hookspath" {
		// A configuration file, or a directory of hooks, whose contents
		// (aliases with "!", sshCommand, hook programs) the parser cannot
		// see.
		return program{word: shWord{pieces: []piece{{text: value.text(), expansion: true}}}, shell: true}, true
	}
	pattern := section + "." + name
	if sub != "" {
		pattern = section + ".*." + name
	}
	shell, ok := gitConfigCommands.get()[pattern]
	if !ok {
		return program{}, false
	}
	if pattern == "core.fsmonitor" && lit && isGitBool(t) {
		return program{}, false
	}
	if pattern == "core.gitproxy" && lit {
		t, _, _ = strings.Cut(t, " for ") // "COMMAND for DOMAIN"
		value = literalWord(t)
	}
	return program{word: value, shell: shell}, true
}

// isGitBool reports whether git reads s as a boolean.
func isGitBool(s string) bool {
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "1", "0":
		return true
	}
	return false
}

// prefixed is word after the literal text prefix.
func prefixed(prefix string, word shWord) shWord {
	return shWord{pieces: append([]piece{{text: prefix, quoted: true}}, word.pieces...)}
}

// gitConfig adds the program a "key=value" word of git -c, clone --config
// or --config-env (envVar: the value is that variable's) sets.
func (w *bashWalker) gitConfig(word shWord, envVar bool, via string, in dirSet) {
	lp := word.knownPrefix()
	eq := strings.IndexByte(lp, '=')
	if eq <= 0 {
		if !word.known() {
			// "-c $kv": any key, so any program (core.pager, include.path).
			w.dataUnknown(word.text(), via)
		}
		return // "-c key" sets true
	}
	value := word.slice(eq + 1)
	if envVar {
		value = shWord{pieces: []piece{{text: "$" + value.text(), expansion: true}}}
	}
	if p, ok := gitConfigProgram(lp[:eq], value); ok {
		p.via = via + " " + lp[:eq]
		w.runLater(p, in)
	}
}

// gitSubcommandProgram is one entry of gitSubcommandPrograms.
type gitSubcommandProgram struct {
	spec     optSpec
	commands []string
}

// gitSubcommandPrograms are, for subcommands that run commands, their
// options with an argument and those whose argument is a command line.
var gitSubcommandPrograms = table[map[string]gitSubcommandProgram]{build: func() map[string]gitSubcommandProgram {
	return map[string]gitSubcommandProgram{
		"rebase": {optSpec{short: "xsX", long: []string{"exec", "onto", "strategy", "strategy-option",
			"whitespace", "empty"}}, []string{"-x", "--exec"}},
		"difftool": {optSpec{short: "xt", long: []string{"extcmd", "tool"}}, []string{"-x", "--extcmd"}},
		"filter-branch": {optSpec{short: "d", long: []string{"setup", "env-filter", "tree-filter",
			"index-filter", "parent-filter", "msg-filter", "commit-filter", "tag-name-filter",
			"subdirectory-filter", "original", "state-branch"}}, []string{"--setup", "--env-filter",
			"--tree-filter", "--index-filter", "--parent-filter", "--msg-filter", "--commit-filter",
			"--tag-name-filter"}},
		"clone": {gitCloneSpec, []string{"-u", "--upload-pack"}},
		"fetch": {gitRemoteSpec, []string{"--upload-pack"}}, "pull": {gitRemoteSpec, []string{"--upload-pack"}},
		"ls-remote": {gitRemoteSpec, []string{"--upload-pack", "--exec"}},
		"push":      {gitRemoteSpec, []string{"--receive-pack", "--exec"}},
	}
}}

// gitPrograms: git runs the commands its -c and --config-env options
// name, and those of subcommand options such as rebase --exec, submodule
// foreach and bisect run. --upload-pack and the like run on the other
// side, which for a local repository is here. sub is the subcommand's
// index (-1 when it is not known).
func (w *bashWalker) gitPrograms(name string, args []shWord, sub int, in dirSet) {
	for i := 0; i < len(args) && i != sub; i++ {
		a, lit := args[i].literal()
		switch {
		case !lit || !strings.HasPrefix(a, "-"):
			return
		case a == "-c" && i+1 < len(args):
			i++
			w.gitConfig(args[i], false, name+" -c", in)
		case strings.HasPrefix(a, "--config-env="):
			w.gitConfig(args[i].slice(len("--config-env=")), true, name+" --config-env", in)
		case a == "--config-env" && i+1 < len(args):
			i++
			w.gitConfig(args[i], true, name+" --config-env", in)
		case gitGlobalArgs.get()[a] || a == "-C":
			i++
		case strings.HasPrefix(a, "--exec-path="):
			// git runs its subcommands from that directory.
			w.runsUnknown(a, name+" --exec-path")
		}
	}
	if sub < 0 {
		return
	}
	verb, _ := args[sub].literal()
	rest := args[sub+1:]
	switch verb {
	case "submodule", "bisect":
		// git submodule [--quiet] foreach [--recursive] COMMAND...;
		// git bisect run COMMAND...
		want := map[string]string{"submodule": "foreach", "bisect": "run"}[verb]
		for len(rest) > 0 {
			t, _ := rest[0].literal()
			rest = rest[1:]
			if t == want {
				break
			}
			if !strings.HasPrefix(t, "-") {
				return
			}
		}
		for len(rest) > 0 && verb == "submodule" {
			if t, _ := rest[0].literal(); !strings.HasPrefix(t, "-") {
				break
			}
			rest = rest[1:]
		}
		if len(rest) > 0 {
			w.runLater(program{word: joinLine(rest), shell: true, via: name + " " + verb + " " + want}, in)
		}
		return
	}
	s, ok := gitSubcommandPrograms.get()[verb]
	if !ok {
		return
	}
	parsed := s.spec.parse(rest)
	for _, a := range parsed {
		if a.hasValue && (a.opt == "-c" || a.opt == "--config") && verb == "clone" {
			w.gitConfig(a.value, false, name+" clone "+a.opt, in)
		}
	}
	for _, a := range parsed {
		for _, c := range s.commands {
			if a.hasValue && a.opt == c {
				w.runLater(program{word: a.value, shell: true, via: name + " " + verb + " " + c}, in)
			}
		}
	}
}

var gitConfigSpec = optSpec{short: "f", long: []string{"file", "blob", "type", "default", "comment", "value", "url"},
	flags: []string{"global", "system", "local", "worktree", "add", "replace-all", "unset", "unset-all",
		"rename-section", "remove-section", "edit", "get", "get-all", "get-regexp", "get-urlmatch",
		"list", "get-color", "get-colorbool", "show-origin", "show-scope"}}

// gitConfigWrite: git config writes a configuration file when it sets,
// unsets, renames, removes or edits (old style: two operands, or one of
// the writing options; new style: set, unset, rename-section,
// remove-section, edit). The file is the repository's .git/config (taken
// beneath the working directory), ~/.gitconfig with --global,
// /etc/gitconfig with --system, .git/config.worktree with --worktree, or
// the --file. A value written there can make every later git run a
// program (core.sshCommand, core.fsmonitor, ...), so it is a write the
// profile decides: .git/config is a protected path.
func (w *bashWalker) gitConfigWrite(args []shWord, in dirSet) {
	parsed := gitConfigSpec.parse(args)
	ops := operands(parsed)
	writes := has(parsed, "--add", "--replace-all", "--unset", "--unset-all", "--rename-section", "--remove-section", "--edit", "-e")
	if len(ops) > 0 {
		switch verb, _ := ops[0].literal(); verb {
		case "set", "unset", "rename-section", "remove-section", "edit":
			writes = true
		case "get", "list":
			writes = false
		default:
			writes = writes || len(ops) >= 2 && !has(parsed, "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "--list", "-l")
		}
	}
	if !writes {
		return
	}
	var file shWord
	switch {
	case len(values(parsed, "--file", "-f")) > 0:
		file = values(parsed, "--file", "-f")[0]
	case has(parsed, "--global"):
		file = literalWord(w.home + "/.gitconfig")
	case has(parsed, "--system"):
		file = literalWord("/etc/gitconfig")
	case has(parsed, "--worktree"):
		file = literalWord(".git/config.worktree")
	default:
		file = literalWord(".git/config")
	}
	w.pathRequirements(tool.KindFilesystemWrite, file, in, "git config")
}
