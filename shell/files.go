package shell

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/airlockhq/airlock/tool"
)

// fileCommand describes how a common command uses its operands.
type fileCommand struct {
	// argOpts are the short options whose argument is the next word.
	argOpts string
	// script: the first operand is a pattern or program (grep, sed, awk)
	// unless one of scriptOpts gave it.
	script     bool
	scriptOpts string
	// writes: every operand is written (tee); inPlace: the operands are
	// written when one of these options is present (sed -i).
	writes  bool
	inPlace string
}

// fileCommands are the commands whose operands name files they read or
// write. Their reads are requirements so that a Read deny rule also stops
// "cat" of the same file.
var fileCommands = table[map[string]fileCommand]{build: func() map[string]fileCommand {
	return map[string]fileCommand{
		"cat": {argOpts: ""}, "tac": {}, "nl": {}, "less": {}, "more": {},
		"head": {argOpts: "nc"}, "tail": {argOpts: "ncs"},
		"grep":  {argOpts: "efmABCdD", script: true, scriptOpts: "ef"},
		"egrep": {argOpts: "efmABCdD", script: true, scriptOpts: "ef"},
		"fgrep": {argOpts: "efmABCdD", script: true, scriptOpts: "ef"},
		"sed":   {argOpts: "efl", script: true, scriptOpts: "ef", inPlace: "i"},
		"awk":   {argOpts: "fvF", script: true, scriptOpts: "f"},
		"sort":  {argOpts: "ktoST"}, "uniq": {argOpts: "fsw"}, "wc": {},
		"cut": {argOpts: "dfbc"}, "diff": {argOpts: "UCFIlLSx"}, "cmp": {argOpts: "inI"},
		"base64": {argOpts: "w"},
		"xxd":    {argOpts: "sclgo"}, "od": {argOpts: "jNtAw"}, "hexdump": {argOpts: "nsefC"},
		"strings": {argOpts: "nte"}, "file": {argOpts: "mfF"}, "stat": {argOpts: "c"},
		"md5sum": {}, "sha1sum": {}, "sha256sum": {}, "sha512sum": {},
		"tee": {writes: true},
		// More readers of their file operands (issue 9): a pager, archive
		// and compression readers, text filters, checksums.
		"bat": {argOpts: "lLmprHS"}, "batcat": {argOpts: "lLmprHS"}, "zcat": {}, "zless": {}, "zmore": {},
		"bzcat": {}, "xzcat": {}, "zstdcat": {}, "lzcat": {}, "rev": {}, "fold": {argOpts: "w"},
		"fmt": {argOpts: "wpgd"}, "pr": {argOpts: "hlwoNsSeiW"}, "expand": {argOpts: "t"}, "unexpand": {argOpts: "t"},
		"paste": {argOpts: "d"}, "join": {argOpts: "aejot12"}, "comm": {}, "column": {argOpts: "cstoNRHWdEl"},
		"cksum": {}, "b2sum": {}, "sum": {}, "sha224sum": {}, "sha384sum": {}, "iconv": {argOpts: "ft"},
		"ls": {argOpts: "ITw"}, "tree": {argOpts: "LPIo"}, "vis": {}, "look": {argOpts: "t"},
	}
}}

// fileOperands adds the reads and writes of a file command's operands,
// and the connections of a network command (see commandEffects).
func (w *bashWalker) fileOperands(name string, args []shWord, in dirSet) {
	defer w.treeOperands(name, args, in)()
	if effects, ok := commandEffects.get()[name]; ok {
		effects(w, name, args, in)
		return
	}
	fc, ok := fileCommands.get()[name]
	if !ok {
		return
	}
	var operands []shWord
	scriptGiven, inPlace, endOpts := false, false, false
	for i := 0; i < len(args); i++ {
		a, lit := args[i].literal()
		if endOpts || !lit || len(a) < 2 || a[0] != '-' {
			operands = append(operands, args[i])
			continue
		}
		if a == "--" {
			endOpts = true
			continue
		}
		if strings.HasPrefix(a, "--") {
			if fc.inPlace != "" && strings.HasPrefix(a, "--in-place") {
				inPlace = true
			}
			if fc.script && (strings.HasPrefix(a, "--regexp") || strings.HasPrefix(a, "--expression") || strings.HasPrefix(a, "--file")) {
				scriptGiven = true
			}
			continue
		}
		for j := 1; j < len(a); j++ {
			c := a[j]
			if fc.inPlace != "" && strings.IndexByte(fc.inPlace, c) >= 0 {
				inPlace = true
				break // GNU sed's -i takes an optional suffix in the same word
			}
			if strings.IndexByte(fc.scriptOpts, c) >= 0 {
				scriptGiven = true
			}
			if strings.IndexByte(fc.argOpts, c) >= 0 {
				if j == len(a)-1 {
					i++ // the argument is the next word
				}
				break
			}
		}
	}
	if fc.script && !scriptGiven && len(operands) > 0 && !fromInput(operands[0]) {
		operands = operands[1:]
	}
	for _, op := range operands {
		switch {
		case fc.writes:
			w.pathRequirements(tool.KindFilesystemWrite, op, in, name)
		default:
			w.pathRequirements(tool.KindFilesystemRead, op, in, name)
			if inPlace {
				w.pathRequirements(tool.KindFilesystemWrite, op, in, name)
			}
		}
	}
}

// pseudoFiles are paths a shell writes or reads that are not files of the
// machine's state: writing them changes nothing a rule is about.
var pseudoFiles = table[map[string]bool]{build: func() map[string]bool {
	return map[string]bool{
		"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/stdin": true,
		"/dev/tty": true, "/dev/zero": true, "-": true,
	}
}}

// pathRequirements adds a kind requirement for the path a word names, once
// for every directory the command may run in. A path with an expansion, a
// relative path in an unknown directory, and a written glob are
// Unresolved; a read glob keeps its pattern, with the glob as a Hole.
func (w *bashWalker) pathRequirements(kind string, word shWord, in dirSet, via string) {
	if w.remote != "" {
		return // a path in a container or a pod (remoteCommand)
	}
	text := word.text()
	if text == "" || pseudoFiles.get()[text] || strings.HasPrefix(text, "/dev/fd/") || strings.HasPrefix(text, "/proc/self/fd/") {
		return
	}
	if len(word.pieces) == 1 && word.pieces[0].expansion &&
		(strings.HasPrefix(text, "<(") || strings.HasPrefix(text, ">(")) {
		return // a process substitution: a pipe, walked as its own commands
	}
	if !in.unknown && !w.pwdShadowed && len(word.pieces) > 0 && isPwd(word.pieces[0]) &&
		!slices.ContainsFunc(in.list, func(d string) bool { return strings.ContainsAny(d, " \t\n*?[") }) {
		// (A directory a split or a glob could change is left unknown.)
		// "$(pwd)/x" is the directory the command runs in.
		for _, d := range in.list {
			known := shWord{pieces: append([]piece{{text: d, quoted: true}}, word.pieces[1:]...)}
			w.pathRequirements(kind, known, dirSet{list: []string{d}}, via)
		}
		return
	}
	expansion, glob := word.hasExpansion(), word.hasGlob()
	shape := pathWordShape(word)
	unresolved := expansion || glob && kind != tool.KindFilesystemRead
	add := func(target, shape string, unresolved bool) {
		r := tool.Requirement{Kind: kind, Target: target, Via: via, Unresolved: unresolved}
		if strings.ContainsRune(shape, tool.Hole) {
			r.Shape = shape
		} else if !unresolved {
			r.Target, r.Names = tool.ResolveNames(target)
		}
		if tool.BadPathRune(text) {
			r.Invalid = "the path holds a control or invisible character"
		}
		w.add(r)
	}
	if expansion && hasDotDot(shape) {
		// "$X/../../etc/passwd": after an expansion, ".." can lead anywhere.
		shape = string(tool.Hole)
	}
	leadingExpansion := len(word.pieces) > 0 && word.pieces[0].expansion
	if filepath.IsAbs(shape) || leadingExpansion {
		if !expansion && !glob {
			add(text, "", false)
		} else {
			add(text, cleanShape(shape, expansion), unresolved)
		}
		return
	}
	if in.unknown {
		add(filepath.Join("$PWD", text), string(tool.Hole)+"/"+shape, true)
		return
	}
	for _, d := range in.list {
		if !expansion && !glob {
			add(d+"/"+text, "", false)
			continue
		}
		add(filepath.Join(d, text), cleanShape(d+"/"+shape, expansion), unresolved)
	}
}

// cleanShape cleans a shape lexically when its holes are globs, which
// stay inside one path element; an expansion can hold slashes, so then
// the shape is left as written.
func cleanShape(shape string, expansion bool) string {
	if expansion {
		return shape
	}
	return filepath.Clean(shape)
}

func hasDotDot(p string) bool {
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return true
		}
	}
	return false
}

// pathWordShape is the word's shape for a path: expansions and the parts
// a glob fills in are Holes, and so is each whole glob element the shell
// expands: "*", "?", a bracket expression ("[v]", one Hole, so ".en[v]"
// can be ".env") and a brace group (".{env,x}", which bash expands to
// both names).
func pathWordShape(word shWord) string {
	var b strings.Builder
	for _, p := range word.pieces {
		switch {
		case p.expansion, p.wild:
			b.WriteRune(tool.Hole)
		case p.quoted:
			b.WriteString(p.text)
		default:
			writeGlobShape(&b, p.text)
		}
	}
	return b.String()
}

func writeGlobShape(b *strings.Builder, text string) {
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch c {
		case '*', '?':
			b.WriteRune(tool.Hole)
			continue
		case '[':
			// "[" starts a bracket expression when a "]" closes it; "]"
			// right after "[" or "[!" is a member.
			j := i + 1
			if j < len(text) && (text[j] == '!' || text[j] == '^') {
				j++
			}
			if j < len(text) && text[j] == ']' {
				j++
			}
			if k := strings.IndexByte(text[j:], ']'); k >= 0 {
				b.WriteRune(tool.Hole)
				i = j + k
				continue
			}
		case '{':
			if end := braceEnd(text, i); end > 0 {
				b.WriteRune(tool.Hole)
				i = end
				continue
			}
		}
		b.WriteByte(c)
	}
}

// braceEnd returns the index of the "}" that closes the brace group at
// text[i], or 0 when bash would not expand it (no "," or ".." inside).
func braceEnd(text string, i int) int {
	depth := 0
	for j := i; j < len(text); j++ {
		switch text[j] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				inner := text[i+1 : j]
				if strings.Contains(inner, ",") || strings.Contains(inner, "..") {
					return j
				}
				return 0
			}
		}
	}
	return 0
}

// isPwd reports whether a piece is "$(pwd)" or "`pwd`": the working
// directory, unless the script defines a function named pwd
// (bashWalker.pwdShadowed).
func isPwd(p piece) bool {
	if !p.expansion {
		return false
	}
	switch strings.Join(strings.Fields(p.text), " ") {
	case "$(pwd)", "`pwd`", "$(pwd -L)", "$(builtin pwd)":
		return true
	}
	return false
}
