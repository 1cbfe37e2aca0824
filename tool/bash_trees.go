package tool

import (
	"os"
	"path/filepath"
	"strings"
)

// A command that reads a directory reads what is inside it: grep -r and
// rg search every file beneath their operands (the working directory when
// there is none), tar c, cp -r, zip -r and rsync copy them, find walks
// them (and -exec hands each file to another command), diff -r compares
// them. Their reads are Tree requirements, so a deny rule about any path
// beneath the directory denies the read (rules.Set.Match). Commands that
// read repository contents by another name (git show HEAD:.env) read that
// path.

// treeReaders are the commands whose reads are Tree reads, with when: nil
// for always, else a check of the arguments (a recursive option).
var treeReaders = map[string]func(args []shWord) bool{
	"grep":  grepRecursive,
	"egrep": grepRecursive,
	"fgrep": grepRecursive,
	"zgrep": grepRecursive,
	"tar":   tarArchives,
	"cp":    shortOrLong("rRa", "recursive", "archive"),
	"scp":   shortOrLong("r", "recursive"),
	"rsync": shortOrLong("ra", "recursive", "archive"),
	"zip":   shortOrLong("rR", "recurse-paths", "recurse-patterns"),
	"diff":  shortOrLong("r", "recursive"),
	"ls":    shortOrLong("R", "recursive"),
	"tree":  nil,
}

// treeWriters are the commands whose writes are Tree writes, with when:
// a recursive remove or copy changes everything beneath its operand, a
// move takes a directory whole, an extraction writes anywhere beneath
// its target. A deny rule about a path inside (Write(.git/hooks/**))
// then holds against "mv evil .git" or "tar x" into the workspace.
var treeWriters = map[string]func(args []shWord) bool{
	"rm":    shortOrLong("rR", "recursive"),
	"mv":    nil,
	"cp":    shortOrLong("rRa", "recursive", "archive"),
	"rsync": shortOrLong("ra", "recursive", "archive"),
	"scp":   shortOrLong("r", "recursive"),
	"tar":   func(args []shWord) bool { return !tarArchives(args) || tarExtracts(args) },
}

// tarExtracts reports whether tar extracts (or may: an unknown mode).
func tarExtracts(args []shWord) bool {
	parsed := tarSpec.parse(tarOldStyle(args))
	if has(parsed, "-x", "--extract", "--get") {
		return true
	}
	for _, a := range args {
		if !a.known() {
			return true
		}
	}
	return false
}

// searchSpecs are the recursive searchers (ripgrep, the silver searcher,
// ack, git grep): PATTERN [PATH...], every PATH a tree, the working
// directory when none is given. short lists the options with an
// argument; noPattern the options after which no PATTERN operand comes.
var searchSpecs = map[string]struct {
	spec      optSpec
	patterns  []string // options that give the pattern
	noPattern []string // options after which every operand is a path
}{
	"rg": {spec: optSpec{short: "ABCdEefgjMmrTt", long: []string{"after-context", "before-context",
		"context", "max-depth", "encoding", "regexp", "file", "glob", "iglob", "threads", "max-columns",
		"max-count", "replace", "type", "type-not", "type-add", "type-clear", "ignore-file", "pre",
		"pre-glob", "sort", "sortr", "engine", "color", "colors", "context-separator", "field-match-separator",
		"field-context-separator", "path-separator", "max-filesize", "dfa-size-limit", "regex-size-limit",
		"hostname-bin", "hyperlink-format", "generate"}},
		patterns: []string{"-e", "--regexp", "-f", "--file"}, noPattern: []string{"--files", "--type-list"}},
	"ag": {spec: optSpec{short: "ABCGgmpW", long: []string{"after", "before", "context", "file-search-regex",
		"ignore", "ignore-dir", "max-count", "path-to-ignore", "depth", "pager", "width"}},
		noPattern: []string{"-g"}},
	"ack": {spec: optSpec{short: "ABCgm", long: []string{"after-context", "before-context", "context",
		"match", "max-count", "type", "ignore-dir", "ignore-file", "output", "files-from"}},
		patterns: []string{"--match"}, noPattern: []string{"-f", "-g"}},
}

// tarArchives reports whether tar creates or adds to an archive, reading
// the trees its operands name (or may, when the mode is not known).
func tarArchives(args []shWord) bool {
	parsed := tarSpec.parse(tarOldStyle(args))
	if has(parsed, "-c", "--create", "-r", "--append", "-u", "--update") {
		return true
	}
	for _, a := range args {
		if !a.known() {
			return true
		}
	}
	return false
}

// grepRecursive reports grep's -r, -R, --recursive,
// --dereference-recursive and -d/--directories recurse.
func grepRecursive(args []shWord) bool {
	parsed := optSpec{short: "efmABCdD", long: []string{"regexp", "file", "max-count", "after-context",
		"before-context", "context", "directories", "devices", "include", "exclude", "exclude-dir",
		"exclude-from", "label", "binary-files", "color", "colour"},
		flags: []string{"recursive", "dereference-recursive"}}.parse(args)
	for _, a := range parsed {
		switch a.opt {
		case "-r", "-R", "--recursive", "--dereference-recursive":
			return true
		case "-d", "--directories":
			if v, lit := a.value.literal(); !lit || v == "recurse" || strings.HasPrefix("recurse", v) && v != "" {
				return true
			}
		}
	}
	return false
}

// shortOrLong returns a check for any of the short option letters (in a
// cluster before an option that takes an argument) or the long options.
func shortOrLong(short string, long ...string) func([]shWord) bool {
	return func(args []shWord) bool {
		for _, w := range args {
			a, lit := w.literal()
			if !lit || len(a) < 2 || a[0] != '-' {
				continue
			}
			if a == "--" {
				return false
			}
			if name, ok := strings.CutPrefix(a, "--"); ok {
				name, _, _ = strings.Cut(name, "=")
				for _, l := range long {
					if name != "" && strings.HasPrefix(l, name) {
						return true
					}
				}
				continue
			}
			if strings.ContainsAny(a[1:], short) {
				return true
			}
		}
		return false
	}
}

// treeOperands is called for every simple command before its operands
// are modelled (fileOperands). It adds the reads that model leaves out
// and returns a function that marks the command's reads as Tree reads
// once they are added.
func (w *bashWalker) treeOperands(name string, args []shWord, in dirSet) (done func()) {
	start := len(w.reqs)
	if s, ok := searchSpecs[name]; ok {
		w.searchOperands(name, args, in, s.spec, s.patterns, s.noPattern)
	}
	switch name {
	case "find":
		for _, start := range findStarts(args) {
			w.treeRead(start, in, name)
		}
	case "zip":
		w.zipOperands(args, in)
	case "git":
		w.gitContentReads(args, in)
	case "jq", "gojq", "jaq":
		w.jqOperands(name, args, in)
	}
	check, reads := treeReaders[name]
	reads = reads && (check == nil || check(args))
	wcheck, writes := treeWriters[name]
	writes = writes && (wcheck == nil || wcheck(args))
	if !reads && !writes {
		return func() {}
	}
	return func() {
		marked := false
		for i := start; i < len(w.reqs); i++ {
			r := &w.reqs[i]
			if r.Via != name {
				continue
			}
			if reads && r.Kind == KindFilesystemRead {
				r.Tree, marked = true, true
			}
			if writes && r.Kind == KindFilesystemWrite {
				r.Tree = true
			}
		}
		if !reads {
			return
		}
		if !marked && (strings.HasSuffix(name, "grep") || name == "ls" || name == "tree") {
			// No operand: the working directory.
			w.treeRead(literalWord("."), in, name)
		}
	}
}

// treeRead adds a Tree read of the directory a word names; a plain read
// of the same path already there becomes a Tree read.
func (w *bashWalker) treeRead(word shWord, in dirSet, via string) {
	saved := w.reqs
	w.reqs = nil
	w.pathRequirements(KindFilesystemRead, word, in, via)
	fresh := w.reqs
	w.reqs = saved
	for _, r := range fresh {
		r.Tree = true
		merged := false
		for i := range w.reqs {
			have := &w.reqs[i]
			if have.Kind == r.Kind && have.Target == r.Target && have.Shape == r.Shape && have.Unresolved == r.Unresolved {
				have.Tree, merged = true, true
			}
		}
		if !merged {
			w.reqs = append(w.reqs, r)
		}
	}
}

// searchOperands: rg, ag, ack: PATTERN [PATH...] unless an option gave
// the pattern; every PATH, or the working directory, is a tree read.
func (w *bashWalker) searchOperands(name string, args []shWord, in dirSet, spec optSpec, patterns, noPattern []string) {
	parsed := spec.parse(args)
	for _, f := range values(parsed, "-f", "--file", "--ignore-file", "--files-from", "--path-to-ignore") {
		w.pathRequirements(KindFilesystemRead, f, in, name)
	}
	ops := operands(parsed)
	if !has(parsed, patterns...) && !has(parsed, noPattern...) && len(ops) > 0 {
		ops = ops[1:]
	}
	if len(ops) == 0 {
		ops = []shWord{literalWord(".")}
	}
	for _, op := range ops {
		w.treeRead(op, in, name)
	}
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
				w.pathRequirements(KindFilesystemRead, path, at, "git "+sub)
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

// jqOperands: jq FILTER [FILE...]; -f/--from-file gives the filter from a
// file (then every operand is input), --slurpfile and --rawfile NAME FILE
// read FILE, --arg/--argjson NAME VALUE take two words, and after --args
// or --jsonargs the operands are values, not files.
func (w *bashWalker) jqOperands(name string, args []shWord, in dirSet) {
	var ops []shWord
	fromFile, argsMode := false, false
	for i := 0; i < len(args); i++ {
		a, lit := args[i].literal()
		if argsMode {
			break
		}
		if !lit || len(a) < 2 || a[0] != '-' {
			ops = append(ops, args[i])
			continue
		}
		switch a {
		case "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case "-f", "--from-file":
			fromFile = true
			if i+1 < len(args) {
				i++
				w.pathRequirements(KindFilesystemRead, args[i], in, name)
			}
		case "--slurpfile", "--rawfile":
			if i+2 < len(args) {
				w.pathRequirements(KindFilesystemRead, args[i+2], in, name)
			}
			i += 2
		case "--arg", "--argjson":
			i += 2
		case "-L", "--indent":
			i++
		case "--args", "--jsonargs":
			argsMode = true // what follows are values, not files
		}
	}
	if !fromFile && len(ops) > 0 {
		ops = ops[1:]
	}
	for _, op := range ops {
		w.pathRequirements(KindFilesystemRead, op, in, name)
	}
}

var zipSpec = optSpec{short: "bnPtOZsxi", long: []string{"temp-path", "suffixes", "password", "from-date",
	"output-file", "compression-method", "split-size", "exclude", "include"}}

// zipOperands: zip ARCHIVE FILE... writes ARCHIVE and reads the files,
// each a tree with -r (the caller marks them).
func (w *bashWalker) zipOperands(args []shWord, in dirSet) {
	ops := operands(zipSpec.parse(args))
	if len(ops) == 0 {
		return
	}
	w.pathRequirements(KindFilesystemWrite, ops[0], in, "zip")
	for _, op := range ops[1:] {
		w.pathRequirements(KindFilesystemRead, op, in, "zip")
	}
}
