package shell

import (
	"strings"

	"github.com/airlockhq/airlock/tool"
)

// makeSpec: GNU make's options that take an argument.
var makeSpec = optSpec{short: "CfIjlOoW", long: []string{"directory", "file", "makefile", "include-dir",
	"jobs", "load-average", "output-sync", "old-file", "assume-old", "what-if", "new-file", "assume-new",
	"eval", "jobserver-style", "shuffle"}}

// makePrograms: make runs every recipe line through $(SHELL), so
// "SHELL=prog" among its arguments is an execution of prog (a command
// line: make hands it the recipe); --eval text is make syntax that can
// define any recipe, as a makefile named by -f can. What the makefile's
// recipes run, the gate cannot see; the sandbox bounds it.
func makePrograms(w *bashWalker, name string, args []shWord, in dirSet) {
	parsed := makeSpec.parse(args)
	for _, d := range values(parsed, "-C", "--directory") {
		in = chdir(in, d)
	}
	for _, e := range values(parsed, "--eval") {
		w.runsUnknown(e.text(), name+" --eval")
	}
	for _, op := range operands(parsed) {
		lp := op.knownPrefix()
		k, _, eq := strings.Cut(lp, "=")
		if !eq {
			continue
		}
		switch strings.TrimRight(strings.TrimSpace(k), ":+?!") {
		case "SHELL", "MAKESHELL":
			w.runLater(program{word: op.slice(len(k) + 1), shell: true, via: name + " SHELL="}, in)
		}
	}
	for _, f := range values(parsed, "-f", "--file", "--makefile") {
		w.pathRequirements(tool.KindFilesystemRead, f, in, name)
	}
}

// manSpec: man's options that take an argument (-H, -T and -X take
// theirs only when attached).
var manSpec = optSpec{short: "CMmLSsepRPrE", long: []string{"config-file", "manpath", "systems", "locale",
	"sections", "extension", "preprocessor", "recode", "pager", "prompt", "encoding", "html", "troff-device",
	"gxditview"}}

// manPrograms: man shows the page through the pager of -P/--pager and a
// browser of -H/--html: each is an execution of that program (man hands
// the pager to the shell). A -C configuration file may name others.
func manPrograms(w *bashWalker, name string, args []shWord, in dirSet) {
	parsed := manSpec.parse(args)
	for _, a := range parsed {
		switch {
		case (a.opt == "-P" || a.opt == "--pager") && a.hasValue:
			w.runLater(program{word: a.value, shell: true, via: name + " " + a.opt}, in)
		case a.opt == "--html" && a.hasValue:
			w.runLater(program{word: a.value, shell: true, via: name + " --html"}, in)
		case a.opt == "-H" && a.index < len(args):
			if lp := args[a.index].knownPrefix(); len(lp) > 2 && strings.HasPrefix(lp, "-H") {
				w.runLater(program{word: args[a.index].slice(2), shell: true, via: name + " -H"}, in)
			}
		case a.opt == "-C" || a.opt == "--config-file":
			w.dataUnknown(a.value.text(), name+" "+a.opt)
		}
	}
}
