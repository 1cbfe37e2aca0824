package shell

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/airlockhq/airlock/tool"
)

// gitCanonSpecs are the options of the git subcommands that rules
// commonly name.
var gitCanonSpecs = table[map[string]canonSpec]{build: func() map[string]canonSpec {
	return map[string]canonSpec{
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
}}

// gitCanonAliases are git subcommands that are other spellings of one
// action.
var gitCanonAliases = table[map[string]string]{build: func() map[string]string {
	return map[string]string{"send-pack": "push", "http-push": "push", "fetch-pack": "fetch"}
}}

// gitCanonSubcommand returns the words after git's subcommand, the
// subcommand ("" when it is not known) and the global options that
// choose where it acts (CommandForm.Global), skipping them:
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
		case a == "-C" || gitGlobalArgs.get()[a]:
			if i+1 < len(args) {
				global = append(global, a+" "+args[i+1].shape(false))
			} else {
				global = append(global, a)
			}
			i++
		case !strings.HasPrefix(a, "-"):
			if to, ok := gitCanonAliases.get()[a]; ok {
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

// gitGlobalArgs are git's options before the subcommand that take the
// next word as their argument.
var gitGlobalArgs = table[map[string]bool]{build: func() map[string]bool {
	return map[string]bool{"-c": true, "--git-dir": true, "--work-tree": true,
		"--namespace": true, "--config-env": true, "--super-prefix": true, "--attr-source": true}
}}

var gitCloneSpec = optSpec{short: "obucj", long: []string{"origin", "branch", "upload-pack",
	"template", "reference", "reference-if-able", "separate-git-dir", "depth", "shallow-since",
	"shallow-exclude", "config", "jobs", "filter", "server-option", "bundle-uri", "revision",
	"ref-format"}, flags: []string{"bare", "mirror"}}

var gitRemoteSpec = optSpec{short: "ojsX", long: []string{"depth", "deepen", "shallow-since",
	"shallow-exclude", "upload-pack", "server-option", "refmap", "jobs", "negotiation-tip", "filter",
	"receive-pack", "exec", "repo", "push-option", "strategy", "strategy-option", "sort"},
	flags: []string{"multiple"}}

// gitOperands: git clone connects to (or reads) the repository and writes
// the directory it clones into; fetch, pull, push and ls-remote connect to
// a repository given as a URL. A named remote ("origin") is left to the
// sandbox: its URL is in the repository's configuration.
func gitOperands(w *bashWalker, name string, args []shWord, in dirSet) {
	i, in := gitSubcommand(args, in)
	w.gitPrograms(name, args, i, in)
	if i < 0 {
		return
	}
	sub, _ := args[i].literal()
	w.gitOutputs(sub, args[i+1:], in)
	w.gitAliasPrograms(sub, args[i+1:], in)
	switch sub {
	case "clone":
		parsed := gitCloneSpec.parse(args[i+1:])
		ops := operands(parsed)
		if len(ops) == 0 {
			return
		}
		w.gitRepository(ops[0], true, in)
		if len(ops) > 1 {
			w.pathRequirements(tool.KindFilesystemWrite, ops[1], in, name)
		} else {
			w.pathRequirements(tool.KindFilesystemWrite, cloneDir(ops[0], has(parsed, "--bare", "--mirror")), in, name)
		}
		for _, d := range values(parsed, "--separate-git-dir") {
			w.pathRequirements(tool.KindFilesystemWrite, d, in, name)
		}
	case "config":
		w.gitConfigWrite(args[i+1:], in)
	case "fetch", "pull", "push", "ls-remote":
		parsed := gitRemoteSpec.parse(args[i+1:])
		repos := values(parsed, "--repo")
		if ops := operands(parsed); len(repos) == 0 && len(ops) > 0 {
			repos = ops[:1]
			if sub == "fetch" && has(parsed, "--multiple") {
				repos = ops
			}
		}
		for _, r := range repos {
			w.gitRepository(r, false, in)
		}
	}
}

// gitSubcommand returns the index of git's subcommand, after the global
// options (-1 when it is not known), and where -C options take git.
func gitSubcommand(args []shWord, in dirSet) (int, dirSet) {
	for i := 0; i < len(args); i++ {
		a, lit := args[i].literal()
		switch {
		case !lit:
			return -1, in
		case a == "-C" && i+1 < len(args):
			i++
			in = chdir(in, args[i])
		case gitGlobalArgs.get()[a]:
			i++
		case !strings.HasPrefix(a, "-"):
			return i, in
		}
	}
	return -1, in
}

// gitRepository adds what reaching a repository word needs: a connection
// for a URL or "[user@]host:path", a read of a local path being cloned,
// nothing for a remote's name.
func (w *bashWalker) gitRepository(word shWord, clone bool, in dirSet) {
	lp, full := word.knownPrefix(), word.known()
	if i := strings.Index(lp, "://"); i >= 0 {
		if strings.EqualFold(lp[:i], "file") {
			if clone {
				w.pathRequirements(tool.KindFilesystemRead, word.slice(i+3), in, "git")
			}
			return
		}
		w.connectURL(word, "", "git", in)
		return
	}
	helper := strings.TrimLeft(lp, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.")
	if strings.HasPrefix(helper, "::") && len(helper) < len(lp) {
		w.connectUnresolved(word, "git") // transport::address runs a remote helper
		return
	}
	host, remote, decided := scpHost(lp)
	switch {
	case remote:
		w.connectHostPort(literalWord(net2(host, "22")), "", "git")
	case !decided && !full:
		w.connectUnresolved(word, "git")
	case clone:
		w.pathRequirements(tool.KindFilesystemRead, word, in, "git")
	}
}

// cloneDir is the directory git clone makes when none is given: the
// repository's last path element without ".git" (with it, for --bare).
func cloneDir(repo shWord, bare bool) shWord {
	base := repo.base()
	text, lit := base.literal()
	if !lit {
		return shWord{pieces: []piece{{text: base.text(), wild: true}}}
	}
	if t, _ := repo.literal(); strings.HasSuffix(strings.TrimRight(t, "/"), "/.git") {
		text = repo.dir().base().text()
	}
	if i := strings.LastIndexByte(text, ':'); i >= 0 {
		text = text[i+1:]
	}
	text = strings.TrimSuffix(strings.TrimSuffix(text, ".git"), ".bundle")
	if bare {
		text += ".git"
	}
	return literalWord(text)
}

// gitContentReads: git subcommands that print file contents by a name
// other than the file's own: "git show REV:PATH" and "git cat-file -p
// REV:PATH" (the committed PATH, relative to the repository's top, taken
// here as the working directory; "./PATH" is relative to it in git too),
// "git diff --no-index A B" and "git grep" (the working tree beneath the
// working directory).
func (w *bashWalker) gitContentReads(args []shWord, in dirSet) {
	i, in := gitSubcommand(args, in)
	if i < 0 {
		return
	}
	sub, _ := args[i].literal()
	rest := args[i+1:]
	switch sub {
	case "show", "cat-file":
		for _, a := range rest {
			lp := a.knownPrefix()
			if strings.HasPrefix(lp, "-") {
				continue
			}
			if c := strings.IndexByte(lp, ':'); c >= 0 {
				path := a.slice(c + 1)
				at := in
				if p := path.knownPrefix(); !strings.HasPrefix(p, "./") && !strings.HasPrefix(p, "../") {
					at = repoTops(in) // REV:PATH is from the top, REV:./PATH from here
				}
				w.pathRequirements(tool.KindFilesystemRead, path, at, "git "+sub)
			} else if !a.known() {
				w.treeRead(literalWord("."), in, "git "+sub) // REV:PATH only known at run time
			}
		}
	case "diff":
		noIndex := false
		for _, a := range rest {
			if t, _ := a.literal(); t == "--no-index" {
				noIndex = true
			}
		}
		if !noIndex {
			return
		}
		for _, a := range rest {
			if t, lit := a.literal(); lit && strings.HasPrefix(t, "-") {
				continue
			}
			w.treeRead(a, in, "git diff")
		}
	case "grep":
		w.treeRead(literalWord("."), in, "git grep")
	}
}

// repoTops returns the top of the repository each directory is in (the
// nearest directory at or above it with a .git), or the directory itself
// when none is found.
func repoTops(in dirSet) dirSet {
	if in.unknown {
		return in
	}
	out := dirSet{}
	for _, d := range in.list {
		top := d
		for p := d; ; p = filepath.Dir(p) {
			if _, err := os.Lstat(filepath.Join(p, ".git")); err == nil {
				top = p
				break
			}
			if p == "/" || p == "." {
				break
			}
		}
		out.list = append(out.list, top)
	}
	return out
}
