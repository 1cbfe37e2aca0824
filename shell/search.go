package shell

import (
	"strings"

	"github.com/airlockhq/airlock/tool"
)

// searchSpec is one entry of searchSpecs.
type searchSpec struct {
	spec      optSpec
	patterns  []string // options that give the pattern
	noPattern []string // options after which every operand is a path
}

// searchSpecs are the recursive searchers (ripgrep, the silver searcher,
// ack, git grep): PATTERN [PATH...], every PATH a tree, the working
// directory when none is given. short lists the options with an
// argument; noPattern the options after which no PATTERN operand comes.
var searchSpecs = table[map[string]searchSpec]{build: func() map[string]searchSpec {
	return map[string]searchSpec{
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
}}

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

// searchOperands: rg, ag, ack: PATTERN [PATH...] unless an option gave
// the pattern; every PATH, or the working directory, is a tree read.
func (w *bashWalker) searchOperands(name string, args []shWord, in dirSet, spec optSpec, patterns, noPattern []string) {
	parsed := spec.parse(args)
	for _, f := range values(parsed, "-f", "--file", "--ignore-file", "--files-from", "--path-to-ignore") {
		w.pathRequirements(tool.KindFilesystemRead, f, in, name)
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
				w.pathRequirements(tool.KindFilesystemRead, args[i], in, name)
			}
		case "--slurpfile", "--rawfile":
			if i+2 < len(args) {
				w.pathRequirements(tool.KindFilesystemRead, args[i+2], in, name)
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
		w.pathRequirements(tool.KindFilesystemRead, op, in, name)
	}
}
