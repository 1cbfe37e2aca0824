package shell

import (
	"path/filepath"
	"strings"
)

// What the gate cannot know, it says. Some commands do what state the
// gate cannot see tells them: "npm test" runs the test script of a
// package.json the agent may have written, "python x.py" runs x.py,
// "make" the Makefile's recipes, "git commit" the repository's hooks and
// whatever its configuration names. The gate decides the command as
// written; unseen names that state for the decision's reason, which says
// only the sandbox bounds what it runs.

// unseenPackageScripts are the package managers' commands that run
// package.json scripts (a lifecycle script for install, ci and publish).
var unseenPackageScripts = table[map[string]bool]{build: func() map[string]bool {
	return map[string]bool{"run": true, "test": true, "start": true, "stop": true,
		"restart": true, "install": true, "ci": true, "publish": true, "pack": true, "rebuild": true,
		"install-test": true, "install-ci-test": true}
}}

// interpreters run a program whose text is a file or a string operand.
var interpreters = table[map[string]bool]{build: func() map[string]bool {
	return map[string]bool{"python": true, "python3": true, "python2": true, "node": true,
		"ruby": true, "perl": true, "php": true, "deno": true, "bun": true, "lua": true, "Rscript": true,
		"bash": true, "sh": true, "dash": true, "zsh": true, "ksh": true, "tsx": true, "ts-node": true}
}}

// unseen returns the state a command's meaning depends on that the gate
// cannot see, or "".
func unseen(words []shWord) string {
	name, ok := words[0].literal()
	if !ok {
		return ""
	}
	if strings.Contains(name, "/") && !strings.HasPrefix(name, "/usr/") && !strings.HasPrefix(name, "/bin/") {
		return "the program " + name + "'s own text"
	}
	prog := filepath.Base(name)
	args := words[1:]
	first := ""
	for _, a := range args {
		if t, lit := a.literal(); lit && !strings.HasPrefix(t, "-") {
			first = t
			break
		}
	}
	switch {
	case prog == "npm":
		if unseenPackageScripts.get()[npmCommand(first)] {
			return "the scripts of package.json (and of the packages it installs)"
		}
	case prog == "pnpm" || prog == "yarn" || prog == "bun" && !strings.Contains(first, "."):
		// Their commands and the package's script names share one word
		// ("yarn build" runs the build script); only these run none.
		switch first {
		case "exec", "dlx", "x", "config", "why", "info", "list", "ls", "outdated", "audit", "help", "--version":
		default:
			return "the scripts of package.json (and of the packages it installs)"
		}
	case prog == "make" || prog == "gmake":
		return "the Makefile's recipes"
	case prog == "go" && (first == "run" || first == "test" || first == "generate"):
		return "the Go code it builds and runs (and its go:generate lines)"
	case prog == "cargo" && (first == "run" || first == "test" || first == "build" || first == "bench"):
		return "the crate's code and build scripts"
	case prog == "git":
		return "the repository's hooks and configuration"
	case interpreters.get()[prog] && len(args) > 0:
		if _, ok := shellScript(prog, args); ok {
			return "" // "bash -c '...'": the script is walked like the call's own
		}
		return "the text of the program " + prog + " runs"
	}
	return ""
}
