package shell

import (
	"github.com/airlockhq/airlock/tool"
)

// gitOutputSpecs are the git subcommands with an option that writes a
// file of the caller's choosing instead of standard output: the diff
// family's --output=FILE (log, show, diff and the rest take diff
// options), archive's -o/--output, format-patch's -o/--output-directory
// DIR (a tree of patches) and bundle create's FILE. Each is a write of
// that file, decided like a redirection to it ("git log --output=.bashrc"
// is "git log > .bashrc").
var gitOutputSpecs = table[map[string]optSpec]{build: func() map[string]optSpec {
	return map[string]optSpec{
		"log": gitDiffOutput, "show": gitDiffOutput, "diff": gitDiffOutput, "whatchanged": gitDiffOutput,
		"diff-tree": gitDiffOutput, "diff-index": gitDiffOutput, "diff-files": gitDiffOutput,
		"range-diff": gitDiffOutput, "stash": gitDiffOutput,
		"format-patch": {short: "ov", exact: true, long: []string{"output", "output-directory", "subject-prefix", "suffix",
			"in-reply-to", "to", "cc", "from", "signature", "signature-file", "base", "interdiff", "range-diff",
			"creation-factor", "cover-letter-format", "description-file", "start-number", "reroll-count"}},
		"archive": {short: "o", exact: true, long: []string{"output", "format", "prefix", "remote", "exec", "add-file",
			"add-virtual-file", "mtime"}},
	}
}}

// gitDiffOutput: the diff option that matters here (every other diff
// option takes its value after "=" or none). Neither the diff options nor
// archive's and format-patch's take abbreviations (git 2.39 refuses
// "--outp=F").
var gitDiffOutput = optSpec{long: []string{"output"}, exact: true}

// gitOutputs adds the files git subcommand sub writes through its
// options (gitOutputSpecs) in directory in.
func (w *bashWalker) gitOutputs(sub string, rest []shWord, in dirSet) {
	if sub == "bundle" {
		// git bundle create FILE REV...: FILE is written.
		if len(rest) >= 2 {
			if verb, _ := rest[0].literal(); verb == "create" {
				for _, op := range operands(optSpec{long: []string{"version"}}.parse(rest[1:])) {
					w.pathRequirements(tool.KindFilesystemWrite, op, in, "git bundle")
					break
				}
			}
		}
		return
	}
	spec, ok := gitOutputSpecs.get()[sub]
	if !ok {
		return
	}
	via := "git " + sub
	for _, a := range spec.parse(rest) {
		switch {
		case a.opt == "--output" || a.opt == "-o" && sub == "archive":
			if a.hasValue {
				w.pathRequirements(tool.KindFilesystemWrite, a.value, in, via+" "+a.opt)
			}
		case a.opt == "--output-directory" || a.opt == "-o" && sub == "format-patch":
			if a.hasValue {
				w.treeWrite(a.value, in, via+" "+a.opt)
			}
		}
	}
}
