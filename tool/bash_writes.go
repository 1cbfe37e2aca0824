package tool

import (
	"strings"
)

// effectFunc adds the requirements of one command's operands: the files
// it reads, creates, changes or removes and the hosts it connects to.
type effectFunc func(w *bashWalker, name string, args []shWord, in dirSet)

// commandEffects are the commands whose operands are modelled beyond the
// plain readers and writers of fileCommands.
var commandEffects = map[string]effectFunc{
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

// writerSpecs are the commands that create, change or remove every
// operand, with the options whose argument is a file they read.
var writerSpecs = map[string]struct {
	spec  optSpec
	reads []string
}{
	"rm": {}, "rmdir": {}, "unlink": {},
	"shred": {spec: optSpec{short: "ns", long: []string{"iterations", "size", "random-source"}},
		reads: []string{"--random-source"}},
	"touch": {spec: optSpec{short: "dtr", long: []string{"date", "reference", "time"}},
		reads: []string{"-r", "--reference"}},
	"mkdir": {spec: optSpec{short: "m", long: []string{"mode"}}},
	"truncate": {spec: optSpec{short: "sr", long: []string{"size", "reference"}},
		reads: []string{"-r", "--reference"}},
}

func writeOperands(w *bashWalker, name string, args []shWord, in dirSet) {
	c := writerSpecs[name]
	parsed := c.spec.parse(args)
	for _, f := range values(parsed, c.reads...) {
		w.pathRequirements(KindFilesystemRead, f, in, name)
	}
	for _, op := range operands(parsed) {
		w.pathRequirements(KindFilesystemWrite, op, in, name)
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
		w.pathRequirements(KindFilesystemRead, f, in, name)
	}
	ops := operands(parsed)
	if len(refs) == 0 && len(ops) > 0 && !fromInput(ops[0]) {
		ops = ops[1:] // the mode, owner or group
	}
	for _, op := range ops {
		w.pathRequirements(KindFilesystemWrite, op, in, name)
	}
}

// isChmodMode reports whether a word that starts with "-" is a symbolic
// mode ("-x", "-rwx") rather than one of chmod's options (-c -f -v -R).
func isChmodMode(s string) bool {
	return len(s) > 1 && !strings.HasPrefix(s, "--") &&
		strings.Trim(s[1:], "rwxXstugoa=+-,01234567") == "" && !strings.ContainsAny(s[1:], "cfvRhHLP")
}

var copySpecs = map[string]optSpec{
	"mv": {short: "tS", long: []string{"target-directory", "suffix"}, flags: []string{"no-target-directory"}},
	"cp": {short: "tS", long: []string{"target-directory", "suffix", "no-preserve", "sparse"},
		flags: []string{"no-target-directory", "parents"}},
	"install": {short: "gmoSt", long: []string{"group", "mode", "owner", "suffix", "target-directory", "strip-program"},
		flags: []string{"no-target-directory", "directory", "strip"}},
	"ln": {short: "tS", long: []string{"target-directory", "suffix"},
		flags: []string{"no-target-directory", "symbolic", "relative"}},
}

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
	parsed := copySpecs[name].parse(args)
	if name == "install" && has(parsed, "-d", "--directory") {
		for _, op := range operands(parsed) {
			w.pathRequirements(KindFilesystemWrite, op, in, name)
		}
		return
	}
	sources, placed := place(name, parsed, in)
	for _, src := range sources {
		kind := KindFilesystemRead
		if name == "mv" {
			kind = KindFilesystemWrite
		}
		w.pathRequirements(kind, src, in, name)
	}
	for _, p := range placed {
		w.pathRequirements(KindFilesystemWrite, p.dest, in, name)
	}
}

// linkOperands: ln writes the link; its target counts as read, since the
// link is a new name for it and later commands that use the link are
// resolved before it exists. A relative symbolic link's target is taken
// from the link's directory.
func linkOperands(w *bashWalker, name string, args []shWord, in dirSet) {
	parsed := copySpecs[name].parse(args)
	_, placed := place(name, parsed, in)
	symbolic := has(parsed, "-s", "--symbolic") && !has(parsed, "-r", "--relative")
	for _, p := range placed {
		w.pathRequirements(KindFilesystemWrite, p.dest, in, name)
		target := p.source
		if symbolic {
			target = joinWords(p.dest.dir(), target)
		}
		w.pathRequirements(KindFilesystemRead, target, in, name)
	}
}

// ddOperands: dd if=FILE reads, of=FILE writes; an operand only known at
// run time may be either.
func ddOperands(w *bashWalker, name string, args []shWord, in dirSet) {
	for _, a := range args {
		lp := a.knownPrefix()
		switch {
		case strings.HasPrefix(lp, "of="):
			w.pathRequirements(KindFilesystemWrite, a.slice(3), in, name)
		case strings.HasPrefix(lp, "if="):
			w.pathRequirements(KindFilesystemRead, a.slice(3), in, name)
		case !a.known() && !strings.Contains(lp, "="):
			w.pathRequirements(KindFilesystemWrite, a, in, name)
		}
	}
}

// perlOperands: perl -n and -p read their file operands and -i edits them
// in place. Without -e the first operand is the program file.
func perlOperands(w *bashWalker, name string, args []shWord, in dirSet) {
	inPlace, program, loop := false, false, false
	var ops []shWord
	for i := 0; i < len(args); i++ {
		a, lit := args[i].literal()
		if !lit || len(a) < 2 || a[0] != '-' {
			ops = args[i:]
			break
		}
		if a == "--" {
			ops = args[i+1:]
			break
		}
	cluster:
		for j := 1; j < len(a); j++ {
			switch a[j] {
			case 'n', 'p':
				loop = true
			case 'i':
				inPlace = true
				break cluster // the rest is the backup suffix
			case 'e', 'E', 'I', 'M', 'm':
				program = program || a[j] == 'e' || a[j] == 'E'
				if j == len(a)-1 {
					i++ // the argument is the next word
				}
				break cluster
			case 'x', 'd', 'D', 'C', 'V':
				break cluster // an optional argument in the same word
			}
		}
	}
	if !program && len(ops) > 0 {
		w.pathRequirements(KindFilesystemRead, ops[0], in, name)
		ops = ops[1:]
	}
	if !loop && !inPlace {
		return // the operands are the program's own arguments
	}
	for _, op := range ops {
		w.pathRequirements(KindFilesystemRead, op, in, name)
		if inPlace {
			w.pathRequirements(KindFilesystemWrite, op, in, name)
		}
	}
}

// findStarts returns find's starting points: the operands before the
// first expression word ("." when there are none).
func findStarts(args []shWord) []shWord {
	var starts []shWord
	for i := 0; i < len(args); i++ {
		a, lit := args[i].literal()
		if lit && (a == "-H" || a == "-L" || a == "-P" || strings.HasPrefix(a, "-O")) && len(starts) == 0 {
			continue
		}
		if lit && a == "-D" && len(starts) == 0 {
			i++
			continue
		}
		if lit && (strings.HasPrefix(a, "-") && len(a) > 1 || a == "(" || a == "!" || a == ",") {
			break
		}
		starts = append(starts, args[i])
	}
	if len(starts) == 0 {
		starts = []shWord{literalWord(".")}
	}
	return starts
}

// findOperands: find -delete removes what it finds below its starting
// points; -fprint and its kin write a file.
func findOperands(w *bashWalker, name string, args []shWord, in dirSet) {
	for i := 0; i < len(args); i++ {
		switch t, _ := args[i].literal(); t {
		case "-delete":
			for _, s := range findStarts(args) {
				w.pathRequirements(KindFilesystemWrite, s, in, name)
			}
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 < len(args) {
				w.pathRequirements(KindFilesystemWrite, args[i+1], in, name)
			}
		case "-exec", "-execdir", "-ok", "-okdir":
			// The command's words are its own (see findExec).
			for i+1 < len(args) {
				i++
				if t, _ := args[i].literal(); t == ";" || t == "+" {
					break
				}
			}
		}
	}
}

var tarSpec = optSpec{
	short: "bCfFgHIKLNTVX",
	long: []string{"file", "directory", "files-from", "exclude-from", "exclude", "listed-incremental",
		"format", "use-compress-program", "starting-file", "tape-length", "newer", "after-date",
		"newer-mtime", "label", "blocking-factor", "record-size", "transform", "xform",
		"strip-components", "owner", "group", "mode", "mtime", "to-command", "info-script",
		"new-volume-script", "index-file", "volno-file", "rsh-command", "rmt-command", "suffix",
		"exclude-tag", "exclude-tag-under", "exclude-tag-all", "quoting-style", "quote-chars",
		"no-quote-chars", "level", "warning", "hole-detection", "add-file", "pax-option",
		"owner-map", "group-map", "sparse-version", "xattrs-include", "xattrs-exclude", "checkpoint-action"},
	flags: []string{"create", "extract", "get", "list", "append", "update", "catenate", "concatenate",
		"diff", "compare", "delete", "absolute-names", "remove-files", "force-local",
		// Options in their own right that also begin a longer one.
		"checkpoint", "sparse"},
}

// tarOperands: tar -c writes its archive (-f) and reads the files it
// archives, each relative to the -C before it; tar -x reads the archive
// and writes the directory it extracts into (the last -C, or the working
// directory), and with -P any path the archive names.
func tarOperands(w *bashWalker, name string, args []shWord, in dirSet) {
	parsed := tarSpec.parse(tarOldStyle(args))
	create := has(parsed, "-c", "--create")
	extract := has(parsed, "-x", "--extract", "--get")
	addTo := has(parsed, "-r", "--append", "-u", "--update", "-A", "--catenate", "--concatenate")
	changes := create || addTo || has(parsed, "--delete")
	reads := extract || addTo || has(parsed, "-t", "--list", "-d", "--diff", "--compare")
	if !changes && !reads {
		// No mode is known: one may be hidden in an expansion.
		for _, a := range args {
			if !a.known() {
				create, extract, changes, reads = true, true, true, true
				break
			}
		}
	}
	for _, f := range values(parsed, "-f", "--file") {
		if _, remote, _ := scpHost(f.knownPrefix()); remote && !has(parsed, "--force-local") {
			w.connectUnresolved(f, name) // rmt through rsh or ssh: the port is not known
			continue
		}
		if reads {
			w.pathRequirements(KindFilesystemRead, f, in, name)
		}
		if changes {
			w.pathRequirements(KindFilesystemWrite, f, in, name)
		}
	}
	for _, f := range values(parsed, "-T", "--files-from", "-X", "--exclude-from") {
		w.pathRequirements(KindFilesystemRead, f, in, name)
	}
	for _, f := range values(parsed, "-g", "--listed-incremental", "--index-file") {
		w.pathRequirements(KindFilesystemWrite, f, in, name)
	}
	cur, target := in, literalWord(".")
	targetDir := in
	for _, a := range parsed {
		switch a.opt {
		case "-C", "--directory":
			targetDir, target = cur, a.value
			cur = chdir(cur, a.value)
		case "":
			if create || addTo {
				w.pathRequirements(KindFilesystemRead, a.value, cur, name)
			}
			if create && has(parsed, "--remove-files") {
				w.pathRequirements(KindFilesystemWrite, a.value, cur, name)
			}
		}
	}
	w.tarPrograms(name, parsed, in)
	if extract {
		w.pathRequirements(KindFilesystemWrite, target, targetDir, name)
		if has(parsed, "-P", "--absolute-names") {
			w.add(Requirement{Kind: KindFilesystemWrite, Target: "/", Shape: string(Hole), Unresolved: true, Via: "tar -P"})
		}
	}
}

// tarOldStyle rewrites tar's old option style ("tar xzf a.tgz", the first
// word a cluster of letters without "-", their arguments the words after
// it in order) as "-x -z -f a.tgz".
func tarOldStyle(args []shWord) []shWord {
	if len(args) == 0 {
		return args
	}
	first, ok := args[0].literal()
	if !ok || first == "" || strings.Trim(first, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
		return args
	}
	rest := args[1:]
	var out []shWord
	for i := 0; i < len(first); i++ {
		out = append(out, literalWord("-"+first[i:i+1]))
		if strings.IndexByte(tarSpec.short, first[i]) >= 0 && len(rest) > 0 {
			out = append(out, rest[0])
			rest = rest[1:]
		}
	}
	return append(out, rest...)
}
