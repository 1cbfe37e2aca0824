package shell

import (
	"strings"

	"github.com/airlockhq/airlock/tool"
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
var treeReaders = table[map[string]func(args []shWord) bool]{build: func() map[string]func(args []shWord) bool {
	return map[string]func(args []shWord) bool{
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
}}

// treeWriters are the commands whose writes are Tree writes, with when:
// a recursive remove or copy changes everything beneath its operand, a
// move takes a directory whole, an extraction writes anywhere beneath
// its target. A deny rule about a path inside (Write(.git/hooks/**))
// then holds against "mv evil .git" or "tar x" into the workspace.
var treeWriters = table[map[string]func(args []shWord) bool]{build: func() map[string]func(args []shWord) bool {
	return map[string]func(args []shWord) bool{
		"rm":    shortOrLong("rR", "recursive"),
		"mv":    nil,
		"cp":    shortOrLong("rRa", "recursive", "archive"),
		"rsync": shortOrLong("ra", "recursive", "archive"),
		"scp":   shortOrLong("r", "recursive"),
		"tar":   func(args []shWord) bool { return !tarArchives(args) || tarExtracts(args) },
	}
}}

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
	if s, ok := searchSpecs.get()[name]; ok {
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
	check, reads := treeReaders.get()[name]
	reads = reads && (check == nil || check(args))
	wcheck, writes := treeWriters.get()[name]
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
			if reads && r.Kind == tool.KindFilesystemRead {
				r.Tree, marked = true, true
			}
			if writes && r.Kind == tool.KindFilesystemWrite {
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
	saved, savedSeen := w.reqs, w.seen
	w.reqs, w.seen = nil, map[reqKey]bool{}
	w.pathRequirements(tool.KindFilesystemRead, word, in, via)
	fresh := w.reqs
	w.reqs, w.seen = saved, savedSeen
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
			w.seen[reqKey{r.Kind, r.Target, r.Shape, r.Unresolved, r.Unparsed}] = true
			w.reqs = append(w.reqs, r)
		}
	}
}

// treeWrite adds a Tree write of the directory a word names (a directory
// a command fills with files it names itself).
func (w *bashWalker) treeWrite(word shWord, in dirSet, via string) {
	saved, savedSeen := w.reqs, w.seen
	w.reqs, w.seen = nil, map[reqKey]bool{}
	w.pathRequirements(tool.KindFilesystemWrite, word, in, via)
	fresh := w.reqs
	w.reqs, w.seen = saved, savedSeen
	for _, r := range fresh {
		r.Tree = true
		w.add(r)
	}
}
