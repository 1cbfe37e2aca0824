package shell

import (
	"slices"
	"strings"

	"github.com/airlockhq/airlock/tool"
)

// One meaning per spelling. A rule names an action: "Bash(rm -rf:*)" is
// about rm removing recursively by force, however the options are spelt
// (rm -fr, rm -r -f, rm --recursive --force, rm -Rfv, /bin/rm -rf), and
// "Bash(git push:*)" about git pushing (git -C dir push, git --no-pager
// push, /usr/bin/git push, git send-pack). So every command.execute has a
// canonical form (CommandForm) besides its written text, and rules are put in the same
// form (rules.ParsePattern) before they are compared.

// CanonicalCommand returns the canonical form of a command written as
// literal words, as rules use it for their own text.
func CanonicalCommand(words []string) *tool.CommandForm {
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
func canonical(words []shWord) *tool.CommandForm {
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
	c := &tool.CommandForm{Name: name}
	args := words[1:]
	if name == "[" {
		// "[ EXPR ]" is test EXPR: a rule for test decides it.
		c.Name = "test"
		if n := len(args); n > 0 {
			if t, _ := args[n-1].literal(); t == "]" {
				args = args[:n-1]
			}
		}
	}
	prog := name[strings.LastIndexByte(name, '/')+1:]
	spec, known := canonSpecs.get()[prog]
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
		spec, known = gitCanonSpecs.get()[sub]
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

var canonSpecs = table[map[string]canonSpec]{build: func() map[string]canonSpec {
	m := map[string]canonSpec{
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
	// chgrp takes chown's options.
	m["chgrp"] = m["chown"]
	return m
}}

// split parses args into flags and the rest. It fails on an option with
// a blank in it ("-'0 0'"), which rule text could not name.
func (s canonSpec) split(c *tool.CommandForm, args []shWord) bool {
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
