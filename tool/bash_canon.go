package tool

import (
	"slices"
	"strings"
)

// One meaning per spelling. A rule names an action: "Bash(rm -rf:*)" is
// about rm removing recursively by force, however the options are spelt
// (rm -fr, rm -r -f, rm --recursive --force, rm -Rfv, /bin/rm -rf), and
// "Bash(git push:*)" about git pushing (git -C dir push, git --no-pager
// push, /usr/bin/git push, git send-pack). So every command.execute has a
// canonical form (CommandForm) besides its written text, and rules are put in the same
// form (rules.ParsePattern) before they are compared.

// CommandForm is a simple command in the form rules compare: the program,
// the subcommand of a program that has them, the flags as a set, and the
// rest in order. See docs/RULES.md.
type CommandForm struct {
	// Name is the program: a path in a system directory is its last
	// element ("/usr/bin/git" is "git"); any other path stays as written,
	// since "./git" is another program (deny and ask rules still compare
	// its last element).
	Name string
	// Words are the subcommand of a program known to have them, after
	// the global options that do not change which action runs ("git -C
	// d --no-pager push" has ["push"]), under its canonical name ("git
	// send-pack" is "push", "npm t" is "test").
	Words []string
	// Global are git's global options that choose where the action runs
	// ("-C /repo/a", "--git-dir=/x", "-c k=v"), as written, in order. The
	// action is the same without them, so a rule that does not name them
	// matches whatever they are; a rule that names them (the exact rule
	// an "always" answer saves for "git -C /repo/a push") matches only a
	// command with the same ones.
	Global []string
	// Flags are the options that take no argument, for programs whose
	// options are known, each once and sorted, under their short name
	// when they have one ("--recursive" is "-r", "-R" is "-r").
	Flags []string
	// Rest is every other word in order (options with their argument
	// written "-o VALUE", operands), as match text: what is only known at
	// run time is a Hole.
	Rest []string
	// Open: a word where options may be is only known at run time, so
	// the command may have any flag.
	Open bool
}

// CanonicalCommand returns the canonical form of a command written as
// literal words, as rules use it for their own text.
func CanonicalCommand(words []string) *CommandForm {
	sws := make([]shWord, len(words))
	for i, s := range words {
		sws[i] = literalWord(s)
	}
	return canonical(sws)
}

// systemBinDirs are the directories whose programs are known by their
// names alone.
var systemBinDirs = []string{"/bin/", "/usr/bin/", "/sbin/", "/usr/sbin/", "/usr/local/bin/", "/usr/local/sbin/"}

// canonical returns the canonical form of a command's words, or nil when
// its program is only known at run time.
func canonical(words []shWord) *CommandForm {
	if len(words) == 0 {
		return nil
	}
	name, ok := words[0].literal()
	if !ok || name == "" || words[0].hasGlob() {
		return nil // "$x", "r*": which program runs is only known at run time
	}
	for _, d := range systemBinDirs {
		if rest, ok := strings.CutPrefix(name, d); ok && rest != "" && !strings.Contains(rest, "/") {
			name = rest
		}
	}
	c := &CommandForm{Name: name}
	args := words[1:]
	prog := name[strings.LastIndexByte(name, '/')+1:]
	spec, known := canonSpecs[prog]
	switch prog {
	case "git":
		var sub string
		var global []string
		args, sub, global = gitCanonSubcommand(args)
		if sub == "" {
			break
		}
		c.Global = global
		c.Words = []string{sub}
		spec, known = gitCanonSpecs[sub]
	case "npm":
		var sub string
		args, sub = npmCanonSubcommand(args)
		if sub != "" {
			c.Words = []string{sub}
		}
		known = false
	}
	if !known {
		c.Rest = make([]string, len(args))
		for i, a := range args {
			c.Rest[i] = a.shape(false)
		}
	} else if !spec.split(c, args) {
		return nil
	}
	// A program, subcommand or flag with a blank in it ("'rm -rf' x")
	// has no canonical form: rule text splits words at blanks, so it
	// could not name it. Such a command is compared by its text alone.
	blank := func(s string) bool { return strings.ContainsAny(s, " \t\n") }
	if blank(c.Name) || slices.ContainsFunc(c.Words, blank) || slices.ContainsFunc(c.Flags, blank) {
		return nil
	}
	return c
}

// canonSpec says how a program's options are written, for the programs
// whose options rules commonly name.
type canonSpec struct {
	// values are the short options that take an argument.
	values string
	// long are the long options (without "--") that take an argument.
	long []string
	// alias maps options to their canonical spelling: one or more short
	// flags separated by spaces ("-D": "-d -f").
	alias map[string]string
	// flags are long options without an argument that have no short
	// name, so that their abbreviations resolve.
	flags []string
	// exact: long options must be written in full (curl).
	exact bool
	// operand reports a word that starts with "-" but is an operand.
	operand func(string) bool
}

var canonSpecs = map[string]canonSpec{
	"rm": {alias: map[string]string{"-R": "-r", "--recursive": "-r", "--force": "-f", "--dir": "-d",
		"--verbose": "-v", "--interactive": "-i"}, flags: []string{"no-preserve-root", "preserve-root", "one-file-system"}},
	"cp": {values: "tS", long: []string{"target-directory", "suffix"}, alias: map[string]string{"-R": "-r",
		"--recursive": "-r", "--force": "-f", "--archive": "-a", "--interactive": "-i", "--no-clobber": "-n",
		"--verbose": "-v", "--link": "-l", "--symbolic-link": "-s", "--no-dereference": "-P", "--dereference": "-L",
		"--one-file-system": "-x", "--update": "-u", "--target-directory": "-t", "--suffix": "-S",
		"--no-target-directory": "-T"}, flags: []string{"parents", "remove-destination", "strip-trailing-slashes"}},
	"mv": {values: "tS", long: []string{"target-directory", "suffix"}, alias: map[string]string{"--force": "-f",
		"--interactive": "-i", "--no-clobber": "-n", "--verbose": "-v", "--update": "-u", "--target-directory": "-t",
		"--suffix": "-S", "--no-target-directory": "-T"}, flags: []string{"strip-trailing-slashes"}},
	"chmod": {long: []string{"reference"}, alias: map[string]string{"--recursive": "-R", "--changes": "-c",
		"--silent": "-f", "--quiet": "-f", "--verbose": "-v"}, flags: []string{"no-preserve-root", "preserve-root"},
		operand: isChmodMode},
	"chown": {long: []string{"reference", "from"}, alias: map[string]string{"--recursive": "-R", "--changes": "-c",
		"--silent": "-f", "--quiet": "-f", "--verbose": "-v", "--no-dereference": "-h"},
		flags: []string{"no-preserve-root", "preserve-root", "dereference"}},
	"curl": {values: curlSpec.short, long: curlSpec.long, exact: true, alias: map[string]string{
		"--output": "-o", "--remote-name": "-O", "--location": "-L", "--silent": "-s", "--insecure": "-k",
		"--data": "-d", "--request": "-X", "--header": "-H", "--user": "-u", "--upload-file": "-T", "--fail": "-f",
		"--show-error": "-S", "--include": "-i", "--verbose": "-v", "--head": "-I", "--form": "-F", "--proxy": "-x",
		"--user-agent": "-A", "--cookie": "-b", "--cookie-jar": "-c", "--referer": "-e", "--range": "-r",
		"--remote-header-name": "-J", "--get": "-G", "--globoff": "-g", "--continue-at": "-C", "--config": "-K",
		"--netrc": "-n", "--write-out": "-w"}},
}

func init() {
	canonSpecs["chgrp"] = canonSpecs["chown"]
}

// gitCanonSpecs are the options of the git subcommands that rules
// commonly name.
var gitCanonSpecs = map[string]canonSpec{
	"push": {values: "o", long: []string{"repo", "receive-pack", "exec", "push-option"}, alias: map[string]string{
		"--force": "-f", "--set-upstream": "-u", "--dry-run": "-n", "--verbose": "-v", "--quiet": "-q",
		"--delete": "-d", "--push-option": "-o", "--ipv4": "-4", "--ipv6": "-6"},
		flags: []string{"all", "mirror", "tags", "follow-tags", "atomic", "no-verify", "verify", "porcelain", "prune", "force-with-lease", "branches"}},
	"clean": {values: "e", long: []string{"exclude"}, alias: map[string]string{"--force": "-f", "--dry-run": "-n",
		"--quiet": "-q", "--interactive": "-i", "--exclude": "-e"}},
	"commit": {values: "mCcFt", long: []string{"message", "file", "author", "date", "template", "reuse-message",
		"reedit-message", "fixup", "squash", "cleanup", "trailer", "pathspec-from-file"}, alias: map[string]string{
		"--all": "-a", "--message": "-m", "--no-verify": "-n", "--signoff": "-s", "--quiet": "-q", "--verbose": "-v",
		"--file": "-F", "--reuse-message": "-C", "--reedit-message": "-c", "--template": "-t", "--edit": "-e"},
		flags: []string{"amend", "allow-empty", "no-edit", "dry-run"}},
	"branch": {values: "", alias: map[string]string{"-D": "-d -f", "-M": "-m -f", "-C": "-c -f", "--delete": "-d",
		"--force": "-f", "--move": "-m", "--copy": "-c", "--all": "-a", "--remotes": "-r", "--verbose": "-v",
		"--list": "-l"}},
	"reset":    {long: []string{"pathspec-from-file"}, flags: []string{"hard", "soft", "mixed", "merge", "keep"}},
	"checkout": {values: "bB", alias: map[string]string{"--force": "-f", "--quiet": "-q"}},
}

// split parses args into flags and the rest. It fails on an option with
// a blank in it ("-'0 0'"), which rule text could not name.
func (s canonSpec) split(c *CommandForm, args []shWord) bool {
	var flags []string
	endOpts := false
	for i := 0; i < len(args); i++ {
		word := args[i]
		t, lit := word.literal()
		switch {
		case !lit || !endOpts && word.hasGlob():
			if !endOpts {
				c.Open = true // "$opts" and "-*" may be any flags
			}
			c.Rest = append(c.Rest, word.shape(true))
			continue
		case endOpts || len(t) < 2 || t[0] != '-' || s.operand != nil && s.operand(t):
			c.Rest = append(c.Rest, word.shape(false))
			continue
		case t == "--":
			endOpts = true
			c.Rest = append(c.Rest, t)
			continue
		case strings.ContainsAny(t, " \t\n"):
			return false
		}
		if strings.HasPrefix(t, "--") {
			name, value, eq := strings.Cut(t[2:], "=")
			name = s.resolveLong(name)
			opt := "--" + name
			if a, ok := s.alias[opt]; ok {
				opt = a
			}
			switch {
			case eq:
				c.Rest = append(c.Rest, opt, value)
			case slices.Contains(s.long, name) && i+1 < len(args):
				i++
				c.Rest = append(c.Rest, opt, args[i].shape(false))
			case slices.Contains(s.long, name):
				c.Rest = append(c.Rest, opt)
			default:
				flags = append(flags, strings.Fields(opt)...)
			}
			continue
		}
		for j := 1; j < len(t); j++ {
			opt := "-" + t[j:j+1]
			if strings.IndexByte(s.values, t[j]) >= 0 {
				if a, ok := s.alias[opt]; ok {
					opt = a
				}
				switch {
				case j+1 < len(t):
					c.Rest = append(c.Rest, opt, t[j+1:])
				case i+1 < len(args):
					i++
					c.Rest = append(c.Rest, opt, args[i].shape(false))
				default:
					c.Rest = append(c.Rest, opt)
				}
				break
			}
			if a, ok := s.alias[opt]; ok {
				opt = a
			}
			flags = append(flags, strings.Fields(opt)...)
		}
	}
	slices.Sort(flags)
	c.Flags = slices.Compact(flags)
	return true
}

// resolveLong returns the long option name abbreviates (GNU getopt and
// git take any unambiguous prefix).
func (s canonSpec) resolveLong(name string) string {
	if s.exact || name == "" {
		return name
	}
	found := ""
	try := func(l string) bool {
		switch {
		case l == name:
			found = l
			return true
		case strings.HasPrefix(l, name):
			if found != "" && found != l {
				found = "\x00" // ambiguous
			} else if found == "" {
				found = l
			}
		}
		return false
	}
	for a := range s.alias {
		if strings.HasPrefix(a, "--") && try(a[2:]) {
			return name
		}
	}
	for _, l := range s.long {
		if try(l) {
			return name
		}
	}
	for _, l := range s.flags {
		if try(l) {
			return name
		}
	}
	if found == "" || found == "\x00" {
		return name
	}
	return found
}

// gitCanonAliases are git subcommands that are other spellings of one
// action.
var gitCanonAliases = map[string]string{"send-pack": "push", "http-push": "push", "fetch-pack": "fetch"}

// gitCanonSubcommand returns the words after git's subcommand and the
// subcommand ("" when it is not known), skipping the global options:
// they choose the repository, the pager and the like, not the action.
// (Those that make git run another program are commands of their own:
// see gitPrograms.)
func gitCanonSubcommand(args []shWord) ([]shWord, string, []string) {
	var global []string
	for i := 0; i < len(args); i++ {
		a, lit := args[i].literal()
		switch {
		case !lit:
			return args, "", nil
		case a == "-C" || gitGlobalArgs[a]:
			if i+1 < len(args) {
				global = append(global, a+" "+args[i+1].shape(false))
			} else {
				global = append(global, a)
			}
			i++
		case !strings.HasPrefix(a, "-"):
			if to, ok := gitCanonAliases[a]; ok {
				a = to
			}
			return args[i+1:], a, global
		case gitWhereOption(a):
			global = append(global, a)
		}
	}
	return args, "", nil
}

// gitWhereOption reports a global option written with its value in one
// word that chooses the repository or the configuration git acts with.
func gitWhereOption(a string) bool {
	for _, p := range []string{"--git-dir=", "--work-tree=", "--namespace=", "--config-env=", "--super-prefix=", "--bare"} {
		if strings.HasPrefix(a, p) {
			return true
		}
	}
	return false
}

// npmCanonAliases are npm's abbreviations of its commands.
var npmCanonAliases = map[string]string{"t": "test", "tst": "test", "run-script": "run", "rum": "run", "urn": "run",
	"i": "install", "in": "install", "ins": "install", "inst": "install", "insta": "install", "instal": "install",
	"isnt": "install", "isnta": "install", "isntal": "install", "isntall": "install", "add": "install",
	"x": "exec", "un": "uninstall", "remove": "uninstall", "rm": "uninstall", "r": "uninstall", "unlink": "uninstall",
	"ci": "ci", "clean-install": "ci", "ic": "ci", "install-clean": "ci", "isntall-clean": "ci",
	"it": "install-test", "cit": "install-ci-test", "rb": "rebuild", "s": "search", "se": "search",
	"find": "search", "c": "config", "ln": "link", "ls": "ls", "la": "ls", "ll": "ls", "list": "ls"}

// npmValueOptions are npm's options before the command that take the
// next word as their value.
var npmValueOptions = map[string]bool{"-w": true, "--workspace": true, "--prefix": true, "-C": true,
	"--registry": true, "--cache": true, "--userconfig": true, "--globalconfig": true, "--loglevel": true,
	"--script-shell": true, "--shell": true, "--tag": true, "-p": true, "--package": true, "--call": true, "-c": true}

// npmCanonSubcommand returns npm's command (under its full name) and the
// other words in order: npm reads options anywhere.
func npmCanonSubcommand(args []shWord) ([]shWord, string) {
	for i := 0; i < len(args); i++ {
		a, lit := args[i].literal()
		switch {
		case !lit:
			return args, ""
		case npmValueOptions[a]:
			i++
		case !strings.HasPrefix(a, "-"):
			if to, ok := npmCanonAliases[a]; ok {
				a = to
			}
			return append(slices.Clip(args[:i]), args[i+1:]...), a
		}
	}
	return args, ""
}
