package shell

import (
	"strings"

	"github.com/airlockhq/airlock/tool"
)

// effectFunc adds the requirements of one command's operands: the files
// it reads, creates, changes or removes and the hosts it connects to.
type effectFunc func(w *bashWalker, name string, args []shWord, in dirSet)

// commandEffects are the commands whose operands are modelled beyond the
// plain readers and writers of fileCommands.
var commandEffects = table[map[string]effectFunc]{build: func() map[string]effectFunc {
	return map[string]effectFunc{
		"rm": writeOperands, "rmdir": writeOperands, "unlink": writeOperands,
		"shred": writeOperands, "touch": writeOperands, "mkdir": writeOperands,
		"truncate": writeOperands,
		"chmod":    changeOperands, "chown": changeOperands, "chgrp": changeOperands,
		"mv": copyOperands, "cp": copyOperands, "install": copyOperands,
		"ln":   linkOperands,
		"dd":   ddOperands,
		"perl": perlOperands,
		"tar":  tarOperands,
		"find": findOperands,
		"curl": curlOperands, "wget": wgetOperands, "git": gitOperands,
		"ssh": sshOperands, "scp": scpOperands, "rsync": scpOperands,
		"nc": ncOperands, "netcat": ncOperands, "ncat": ncOperands,
	}
}}

// writerSpec is one entry of writerSpecs.
type writerSpec struct {
	spec  optSpec
	reads []string
}

// writerSpecs are the commands that create, change or remove every
// operand, with the options whose argument is a file they read.
var writerSpecs = table[map[string]writerSpec]{build: func() map[string]writerSpec {
	return map[string]writerSpec{
		"rm": {}, "rmdir": {}, "unlink": {},
		"shred": {spec: optSpec{short: "ns", long: []string{"iterations", "size", "random-source"}},
			reads: []string{"--random-source"}},
		"touch": {spec: optSpec{short: "dtr", long: []string{"date", "reference", "time"}},
			reads: []string{"-r", "--reference"}},
		"mkdir": {spec: optSpec{short: "m", long: []string{"mode"}}},
		"truncate": {spec: optSpec{short: "sr", long: []string{"size", "reference"}},
			reads: []string{"-r", "--reference"}},
	}
}}

func writeOperands(w *bashWalker, name string, args []shWord, in dirSet) {
	c := writerSpecs.get()[name]
	parsed := c.spec.parse(args)
	for _, f := range values(parsed, c.reads...) {
		w.pathRequirements(tool.KindFilesystemRead, f, in, name)
	}
	for _, op := range operands(parsed) {
		w.pathRequirements(tool.KindFilesystemWrite, op, in, name)
	}
}

// changeOperands: chmod MODE FILE..., chown OWNER FILE..., chgrp GROUP
// FILE..., or with --reference=RFILE only files.
func changeOperands(w *bashWalker, name string, args []shWord, in dirSet) {
	spec := optSpec{long: []string{"reference", "from"}}
	if name == "chmod" {
		spec.operand = isChmodMode
	}
	parsed := spec.parse(args)
	refs := values(parsed, "--reference")
	for _, f := range refs {
		w.pathRequirements(tool.KindFilesystemRead, f, in, name)
	}
	ops := operands(parsed)
	if len(refs) == 0 && len(ops) > 0 && !fromInput(ops[0]) {
		ops = ops[1:] // the mode, owner or group
	}
	for _, op := range ops {
		w.pathRequirements(tool.KindFilesystemWrite, op, in, name)
	}
}

// isChmodMode reports whether a word that starts with "-" is a symbolic
// mode ("-x", "-rwx") rather than one of chmod's options (-c -f -v -R).
func isChmodMode(s string) bool {
	return len(s) > 1 && !strings.HasPrefix(s, "--") &&
		strings.Trim(s[1:], "rwxXstugoa=+-,01234567") == "" && !strings.ContainsAny(s[1:], "cfvRhHLP")
}

var copySpecs = table[map[string]optSpec]{build: func() map[string]optSpec {
	return map[string]optSpec{
		"mv": {short: "tS", long: []string{"target-directory", "suffix"}, flags: []string{"no-target-directory"}},
		"cp": {short: "tS", long: []string{"target-directory", "suffix", "no-preserve", "sparse"},
			flags: []string{"no-target-directory", "parents"}},
		"install": {short: "gmoSt", long: []string{"group", "mode", "owner", "suffix", "target-directory", "strip-program"},
			flags: []string{"no-target-directory", "directory", "strip"}},
		"ln": {short: "tS", long: []string{"target-directory", "suffix"},
			flags: []string{"no-target-directory", "symbolic", "relative"}},
	}
}}

// placement is one source of mv, cp, install or ln and where it goes.
type placement struct{ source, dest shWord }

// place parses the operands of mv, cp, install and ln: SOURCE DEST,
// SOURCE... DIR, -t DIR SOURCE..., and (ln) a lone TARGET linked into
// the working directory. A source goes into a directory as dir/base.
func place(name string, parsed []arg, in dirSet) (sources []shWord, out []placement) {
	ops := operands(parsed)
	dirs := values(parsed, "-t", "--target-directory")
	switch {
	case len(dirs) > 0:
		sources = ops
	case len(ops) == 1 && fromInput(ops[0]):
		return ops, []placement{{ops[0], ops[0]}} // sources and destination alike
	case len(ops) == 1 && name == "ln":
		sources, dirs = ops, []shWord{literalWord(".")}
	case len(ops) >= 2:
		last := ops[len(ops)-1]
		sources = ops[:len(ops)-1]
		if has(parsed, "-T", "--no-target-directory") || len(sources) == 1 && !isDir(last, in) {
			return sources, []placement{{sources[0], last}}
		}
		dirs = []shWord{last}
	}
	parents := name == "cp" && has(parsed, "--parents")
	for _, src := range sources {
		for _, d := range dirs {
			if parents {
				out = append(out, placement{src, joinWords(d, src)})
			} else {
				out = append(out, placement{src, joinWords(d, src.base())})
			}
		}
	}
	return sources, out
}

// copyOperands: mv writes (removes) its sources, cp and install read them;
// all write where the sources go. install -d creates its operands.
func copyOperands(w *bashWalker, name string, args []shWord, in dirSet) {
	parsed := copySpecs.get()[name].parse(args)
	if name == "install" && has(parsed, "-d", "--directory") {
		for _, op := range operands(parsed) {
			w.pathRequirements(tool.KindFilesystemWrite, op, in, name)
		}
		return
	}
	sources, placed := place(name, parsed, in)
	for _, src := range sources {
		kind := tool.KindFilesystemRead
		if name == "mv" {
			kind = tool.KindFilesystemWrite
		}
		w.pathRequirements(kind, src, in, name)
	}
	for _, p := range placed {
		w.pathRequirements(tool.KindFilesystemWrite, p.dest, in, name)
	}
}

// linkOperands: ln writes the link; its target counts as read, since the
// link is a new name for it and later commands that use the link are
// resolved before it exists. A relative symbolic link's target is taken
// from the link's directory.
func linkOperands(w *bashWalker, name string, args []shWord, in dirSet) {
	parsed := copySpecs.get()[name].parse(args)
	_, placed := place(name, parsed, in)
	symbolic := has(parsed, "-s", "--symbolic") && !has(parsed, "-r", "--relative")
	for _, p := range placed {
		w.pathRequirements(tool.KindFilesystemWrite, p.dest, in, name)
		target := p.source
		if symbolic {
			target = joinWords(p.dest.dir(), target)
		}
		w.pathRequirements(tool.KindFilesystemRead, target, in, name)
	}
}

// ddOperands: dd if=FILE reads, of=FILE writes; an operand only known at
// run time may be either.
func ddOperands(w *bashWalker, name string, args []shWord, in dirSet) {
	for _, a := range args {
		lp := a.knownPrefix()
		switch {
		case strings.HasPrefix(lp, "of="):
			w.pathRequirements(tool.KindFilesystemWrite, a.slice(3), in, name)
		case strings.HasPrefix(lp, "if="):
			w.pathRequirements(tool.KindFilesystemRead, a.slice(3), in, name)
		case !a.known() && !strings.Contains(lp, "="):
			w.pathRequirements(tool.KindFilesystemWrite, a, in, name)
		}
	}
}
