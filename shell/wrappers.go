package shell

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// wrapped is a command that another command runs.
type wrapped struct {
	words      []shWord
	dirUnknown bool // the wrapper changes directory (env -C, sudo -D)
	// script is a command line the wrapper splits itself (env -S).
	script string
	// line is a command line the wrapper hands to the shell (flock -c,
	// watch), known or not; lineVia follows the wrapper's name in Via.
	line    *shWord
	lineVia string
	// extra are the operands the wrapper adds (xargs, find -exec).
	extra operandSource
}

// wrapperOptions lists, for commands that run another command, the short
// options that take an argument. The command starts at the first operand
// (after "NAME=value" pairs for env and sudo).
var wrapperOptions = table[map[string]string]{build: func() map[string]string {
	return map[string]string{
		"sudo": "ugpChDrtUTR", "doas": "uC", "env": "uCS", "nohup": "", "setsid": "",
		"command": "", "builtin": "", "exec": "a", "nice": "n", "ionice": "cnpP",
		"stdbuf": "ioe", "time": "fo", "xargs": "IaEdLnPs", "chrt": "", "taskset": "",
		"timeout": "sk", "caffeinate": "", "unbuffer": "", "flock": "wE", "strace": "eoOpPsSu",
		"watch": "nd", "unshare": "SGRw", "chroot": "", "nsenter": "tSG", "prlimit": "p",
		"setpriv": "", "pkexec": "", "busybox": "", "toybox": "", "fakeroot": "", "eatmydata": "",
		"proxychains": "", "proxychains4": "", "torsocks": "", "dbus-run-session": "", "tini": "", "dumb-init": "",
		"tsocks": "", "catchsegv": "", "valgrind": "", "ltrace": "eopsuanADFlxw", "sshpass": "pfdP", "firejail": "",
	}
}}

// wrapperLongOptions lists the long options of wrappers whose argument
// may be the next word ("--user root").
var wrapperLongOptions = table[map[string][]string]{build: func() map[string][]string {
	return map[string][]string{
		"sudo":    {"user", "group", "host", "prompt", "close-from", "chdir", "role", "type", "command-timeout", "other-user", "chroot"},
		"env":     {"unset", "chdir", "split-string"},
		"nice":    {"adjustment"},
		"ionice":  {"class", "classdata", "pid", "pgid", "uid"},
		"stdbuf":  {"input", "output", "error"},
		"time":    {"format", "output"},
		"xargs":   {"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"},
		"timeout": {"signal", "kill-after"},
		"flock":   {"wait", "timeout", "conflict-exit-code"},
		"watch":   {"interval", "differences"},
		"unshare": {"propagation", "setgroups", "root", "wd", "setuid", "setgid", "map-user",
			"map-group", "map-users", "map-groups"},
		"chroot":  {"userspec", "groups"},
		"nsenter": {"target", "setuid", "setgid"},
		"prlimit": {"pid"},
		"setpriv": {"reuid", "regid", "ruid", "rgid", "euid", "egid", "groups", "inh-caps",
			"ambient-caps", "bounding-set", "securebits", "pdeathsig", "selinux-label",
			"apparmor-profile", "landlock-access", "landlock-rule"},
		"pkexec": {"user"},
	}
}}

// unwrap returns the commands a wrapper (sudo, env, xargs, timeout,
// find -exec, ...) runs.
func unwrap(name string, args []shWord) []wrapped {
	if name == "find" {
		return findExec(args)
	}
	opts, ok := wrapperOptions.get()[name]
	if !ok {
		return nil
	}
	i, dirUnknown, watchExec := 0, false, false
	var extra operandSource
	if name == "xargs" {
		extra.appended = true
	}
	for i < len(args) {
		a, lit := args[i].literal()
		if !lit {
			break
		}
		if a == "--" {
			i++
			break
		}
		if len(a) > 1 && a[0] == '-' {
			if name == "command" && (a == "-v" || a == "-V") {
				return nil // only looks the name up
			}
			long, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			if name == "env" && (shortOption(a, opts, 'C') >= 0 || strings.HasPrefix(a, "--chdir")) ||
				name == "sudo" && (shortOption(a, opts, 'D') >= 0 || strings.HasPrefix(a, "--chdir")) ||
				name == "unshare" && (shortOption(a, opts, 'R') >= 0 || shortOption(a, opts, 'w') >= 0 ||
					strings.HasPrefix(a, "--root") || strings.HasPrefix(a, "--wd")) {
				dirUnknown = true
			}
			if name == "watch" && (shortOption(a, opts, 'x') >= 0 || a == "--exec") {
				watchExec = true
			}
			if name == "env" && (shortOption(a, opts, 'S') >= 0 || strings.HasPrefix(a, "--split-string")) {
				return envSplitString(args[i:])
			}
			if name == "xargs" {
				if r, ok := xargsReplace(args, i); ok {
					extra = operandSource{replace: r, with: []piece{{text: r, expansion: true}}}
				}
			}
			if takesArgument(a, opts) || strings.HasPrefix(a, "--") && !strings.Contains(a, "=") &&
				slices.Contains(wrapperLongOptions.get()[name], long) {
				i++
			}
			i++
			continue
		}
		if (name == "env" || name == "sudo") && strings.Contains(a, "=") {
			i++
			continue
		}
		break
	}
	if name == "timeout" || name == "chrt" || name == "taskset" || name == "flock" || name == "chroot" {
		i++ // the duration, priority, CPU mask, lock file or new root
	}
	if name == "chroot" {
		dirUnknown = true // and every absolute path is below the new root
	}
	if i >= len(args) {
		return nil
	}
	if t, _ := args[i].literal(); name == "flock" && (t == "-c" || t == "--command") {
		if i+1 >= len(args) {
			return nil
		}
		return []wrapped{{line: &args[i+1], lineVia: " -c"}}
	}
	if name == "watch" && !watchExec {
		line := joinLine(args[i:]) // watch runs its words, joined, through sh -c
		return []wrapped{{line: &line}}
	}
	return []wrapped{{words: args[i:], dirUnknown: dirUnknown, extra: extra}}
}

// shortOption returns where the option word a, a cluster of short options
// of which opts take an argument, has option c ("-iS": 2), or -1.
func shortOption(a, opts string, c byte) int {
	if len(a) < 2 || a[0] != '-' || a[1] == '-' {
		return -1
	}
	for j := 1; j < len(a); j++ {
		if a[j] == c {
			return j
		}
		if strings.IndexByte(opts, a[j]) >= 0 {
			return -1 // the rest of the word is that option's argument
		}
	}
	return -1
}

// envSplitString returns the command of "env -S 'LINE' ARGS": env splits
// LINE into words itself, so it is parsed as a script with ARGS after it.
// args starts at the option word.
func envSplitString(args []shWord) []wrapped {
	a, _ := args[0].literal()
	var line string
	rest := args[1:]
	switch {
	case strings.HasPrefix(a, "--"):
		if _, v, ok := strings.Cut(a, "="); ok {
			line = v
		} else if len(rest) > 0 {
			line, _ = rest[0].literal()
			rest = rest[1:]
		}
	case shortOption(a, wrapperOptions.get()["env"], 'S') < len(a)-1:
		line = a[shortOption(a, wrapperOptions.get()["env"], 'S')+1:]
	case len(rest) > 0:
		var ok bool
		if line, ok = rest[0].literal(); !ok {
			// A command line only known at run time: env splits it.
			return []wrapped{{line: &rest[0], lineVia: " -S"}}
		}
		rest = rest[1:]
	}
	for _, r := range rest {
		t, ok := r.literal()
		if q, err := syntax.Quote(t, syntax.LangBash); ok && err == nil {
			t = q
		}
		line += " " + t
	}
	if strings.TrimSpace(line) == "" {
		return nil
	}
	return []wrapped{{script: line}}
}

// takesArgument reports whether the option word a (a short option cluster)
// ends in an option of opts whose argument is the next word.
func takesArgument(a, opts string) bool {
	if strings.HasPrefix(a, "--") {
		return false
	}
	for j := 1; j < len(a); j++ {
		if strings.IndexByte(opts, a[j]) >= 0 {
			return j == len(a)-1
		}
	}
	return false
}

// envCommands are the variables that name a program other programs run:
// true for a command line run through the shell, false for a program name.
// Which commands read them cannot be listed (any script may run git), so
// setting one counts as running its value.
var envCommands = table[map[string]bool]{build: func() map[string]bool {
	return map[string]bool{
		"GIT_SSH_COMMAND": true, "GIT_PAGER": true, "GIT_EDITOR": true, "GIT_SEQUENCE_EDITOR": true,
		"GIT_EXTERNAL_DIFF": true, "PAGER": true, "MANPAGER": true, "SYSTEMD_PAGER": true,
		"EDITOR": true, "VISUAL": true, "SUDO_EDITOR": true, "LESSOPEN": true, "LESSCLOSE": true,
		"RSYNC_RSH": true,
		"GIT_SSH":   false, "GIT_ASKPASS": false, "SSH_ASKPASS": false, "SUDO_ASKPASS": false,
		"GIT_PROXY_COMMAND": false, "npm_config_script_shell": false, "NPM_CONFIG_SCRIPT_SHELL": false,
		"npm_config_shell": false, "NPM_CONFIG_SHELL": false,
	}
}}

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
