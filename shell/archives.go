package shell

import (
	"strings"

	"github.com/airlockhq/airlock/tool"
)

// tarPrograms: GNU tar hands -I/--use-compress-program, --to-command,
// -F/--info-script, --new-volume-script and --checkpoint-action=exec= to
// /bin/sh -c, and runs --rsh-command as the remote shell.
func (w *bashWalker) tarPrograms(name string, parsed []arg, in dirSet) {
	for _, a := range parsed {
		if !a.hasValue {
			continue
		}
		switch a.opt {
		case "-I", "--use-compress-program", "--to-command", "-F", "--info-script", "--new-volume-script":
			w.runLater(program{word: a.value, shell: true, via: name + " " + a.opt}, in)
		case "--checkpoint-action":
			if strings.HasPrefix(a.value.knownPrefix(), "exec=") {
				w.runLater(program{word: a.value.slice(len("exec=")), shell: true, via: name + " " + a.opt}, in)
			}
		case "--rsh-command":
			w.runLater(program{word: a.value, via: name + " " + a.opt}, in)
		}
	}
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

var zipSpec = optSpec{short: "bnPtOZsxi", long: []string{"temp-path", "suffixes", "password", "from-date",
	"output-file", "compression-method", "split-size", "exclude", "include"}}

// zipOperands: zip ARCHIVE FILE... writes ARCHIVE and reads the files,
// each a tree with -r (the caller marks them).
func (w *bashWalker) zipOperands(args []shWord, in dirSet) {
	ops := operands(zipSpec.parse(args))
	if len(ops) == 0 {
		return
	}
	w.pathRequirements(tool.KindFilesystemWrite, ops[0], in, "zip")
	for _, op := range ops[1:] {
		w.pathRequirements(tool.KindFilesystemRead, op, in, "zip")
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
			w.pathRequirements(tool.KindFilesystemRead, f, in, name)
		}
		if changes {
			w.pathRequirements(tool.KindFilesystemWrite, f, in, name)
		}
	}
	for _, f := range values(parsed, "-T", "--files-from", "-X", "--exclude-from") {
		w.pathRequirements(tool.KindFilesystemRead, f, in, name)
	}
	for _, f := range values(parsed, "-g", "--listed-incremental", "--index-file") {
		w.pathRequirements(tool.KindFilesystemWrite, f, in, name)
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
				w.pathRequirements(tool.KindFilesystemRead, a.value, cur, name)
			}
			if create && has(parsed, "--remove-files") {
				w.pathRequirements(tool.KindFilesystemWrite, a.value, cur, name)
			}
		}
	}
	w.tarPrograms(name, parsed, in)
	if extract {
		w.pathRequirements(tool.KindFilesystemWrite, target, targetDir, name)
		if has(parsed, "-P", "--absolute-names") {
			w.add(tool.Requirement{Kind: tool.KindFilesystemWrite, Target: "/", Shape: string(tool.Hole), Unresolved: true, Via: "tar -P"})
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
