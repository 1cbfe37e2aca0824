package shell

import "strings"

// Ordinary work is allowed. A careful reviewer reads "cd web && npm test",
// "NODE_ENV=production npm run build", "export CI=true; npm test" and
// "command git log" as the allowed command they run: the cd, the
// assignment, the export and the command builtin change only the shell's
// own state, which the walker follows (the directory, the variables and
// where their values are run as code). So those parts add no
// command.execute of their own, unless they change what later programs
// are or load (PATH=..., LD_PRELOAD=..., GIT_DIR=...): then they stay a
// command that a rule must allow. Everything they contain (a command
// substitution, the program a variable such as GIT_SSH_COMMAND names) is
// still a requirement.

// inertBuiltins are the builtins that only change the shell's own state
// (or nothing), with the check of their arguments.
var inertBuiltins = table[map[string]func(args []shWord) bool]{build: func() map[string]func(args []shWord) bool {
	return map[string]func(args []shWord) bool{
		"cd": anyArgs, "pushd": anyArgs, "popd": anyArgs, "dirs": anyArgs,
		":": anyArgs, "true": anyArgs, "false": anyArgs,
		"set": anyArgs, "shopt": anyArgs, "shift": anyArgs, "break": anyArgs, "continue": anyArgs,
		"return": anyArgs, "exit": anyArgs, "wait": anyArgs, "umask": anyArgs, "read": anyArgs,
		"export": inertDeclaration(""), "readonly": inertDeclaration("rp"),
		"declare": inertDeclaration("rxp"), "typeset": inertDeclaration("rxp"), "local": inertDeclaration("rx"),
		// command and builtin only choose how the name is looked up: the
		// command they run (unwrap) is the requirement; "command -v" only
		// prints where a name is.
		"command": anyArgs, "builtin": anyArgs,
	}
}}

func anyArgs([]shWord) bool { return true }

// inertDeclaration: export, declare and the like are inert when they only
// set variables that change no program (inertVariable) with the flags
// allowed ("-i" makes bash evaluate values as arithmetic, "-n" makes a
// reference, "-f" exports a function, "-a" and "-A" arrays whose
// subscripts are arithmetic: none of those).
func inertDeclaration(flags string) func(args []shWord) bool {
	return func(args []shWord) bool {
		for _, a := range args {
			lp, full := a.knownPrefix(), a.known()
			if strings.HasPrefix(lp, "-") {
				if !full || strings.Trim(lp[1:], flags) != "" {
					return false
				}
				continue
			}
			name, _, _ := strings.Cut(lp, "=")
			if !inertVariable(strings.TrimSuffix(name, "+")) {
				return false
			}
		}
		return true
	}
}

// inertBuiltin reports whether a command is one of inertBuiltins with
// arguments that keep it inert.
func inertBuiltin(words []shWord) bool {
	name, ok := words[0].literal()
	if !ok {
		return false
	}
	check, ok := inertBuiltins.get()[name]
	return ok && check(words[1:])
}

// inertAssignments reports whether assignments in front of a command
// change only variables that change no program.
func inertAssignments(assigns []shWord) bool {
	for _, a := range assigns {
		name, _, ok := strings.Cut(a.knownPrefix(), "=")
		if !ok || !inertVariable(strings.TrimSuffix(name, "+")) {
			return false
		}
	}
	return true
}

// riskyVariables are variables that change which program runs, what it
// loads or which configuration it reads, in ways the walker does not
// follow; riskyPrefixes are families of them. (The variables whose value
// is a program or code, such as GIT_SSH_COMMAND, EDITOR, BASH_ENV and
// PROMPT_COMMAND, are followed: their value is a requirement of its own.)
var riskyVariables = table[map[string]bool]{build: func() map[string]bool {
	return map[string]bool{
		"PATH": true, "IFS": true, "CDPATH": true, "HOME": true, "SHELLOPTS": true, "BASHOPTS": true,
		"GLOBIGNORE": true, "BROWSER": true, "SHELL": true, "TMPDIR": false,
		"NODE_OPTIONS": true, "NODE_PATH": true, "CLASSPATH": true, "JAVA_TOOL_OPTIONS": true,
		"_JAVA_OPTIONS": true, "JDK_JAVA_OPTIONS": true, "GCONV_PATH": true, "LOCPATH": true,
		"MAKEFLAGS": true, "MAKEFILES": true, "MFLAGS": true, "GOFLAGS": true, "GOENV": true,
		"GOTOOLCHAIN": true, "GOROOT": true, "GOPATH": true, "GOBIN": true, "CC": true, "CXX": true,
		"CPP": true, "LD": true, "AR": true, "CFLAGS": true, "CXXFLAGS": true, "CPPFLAGS": true,
		"LDFLAGS": true, "RUSTFLAGS": true, "RUSTC": true, "RUSTC_WRAPPER": true, "RUBYOPT": true,
		"RUBYLIB": true, "PERLLIB": true, "LESS": true, "LESSKEY": true, "SSH_AUTH_SOCK": false,
	}
}}

var riskyPrefixes = []string{"LD_", "DYLD_", "GIT_", "PYTHON", "PERL5", "PERL_", "GEM_", "BUNDLE_",
	"CGO_CFLAGS", "CGO_CPPFLAGS", "CGO_CXXFLAGS", "CGO_LDFLAGS", "CARGO_", "npm_config_", "NPM_CONFIG_",
	"YARN_", "PNPM_", "PIP_", "XDG_", "BASH_", "DOCKER_", "KUBE"}

// harmlessGit are git's variables that only set what a commit records or
// whether git prompts.
var harmlessGit = table[map[string]bool]{build: func() map[string]bool {
	return map[string]bool{"GIT_AUTHOR_NAME": true, "GIT_AUTHOR_EMAIL": true, "GIT_AUTHOR_DATE": true,
		"GIT_COMMITTER_NAME": true, "GIT_COMMITTER_EMAIL": true, "GIT_COMMITTER_DATE": true,
		"GIT_TERMINAL_PROMPT": true}
}}

// inertVariable reports whether setting variable name changes no program
// beyond what the walker follows.
func inertVariable(name string) bool {
	if name == "" || !isName(name) {
		return false // "a[$(x)]=1" and the like: data.go decides it
	}
	if _, ok := envCommands.get()[name]; ok {
		return true // its value is a program run: a requirement of its own
	}
	if harmlessGit.get()[name] {
		return true
	}
	if risky, ok := riskyVariables.get()[name]; ok {
		return !risky
	}
	for _, p := range riskyPrefixes {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	return true
}
