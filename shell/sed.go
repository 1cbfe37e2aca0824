package shell

import (
	"strings"

	"github.com/airlockhq/airlock/tool"
)

// sedPrograms: GNU sed's "e COMMAND" runs COMMAND through the shell, and
// "e" alone and the s command's e flag run the pattern space, which comes
// from the input; "r FILE" and "R FILE" read FILE, "w FILE", "W FILE" and
// the s command's w flag write it. --sandbox refuses all of them. A script sed would read from a
// file (-f) is not seen, as an awk or perl program is not; a script with
// an expansion is as dynamic as the command's own words.
func sedPrograms(w *bashWalker, name string, args []shWord, in dirSet) {
	var scripts []string
	fromFile, operand := false, -1
	for i := 0; i < len(args); i++ {
		a, lit := args[i].literal()
		if !lit || len(a) < 2 || a[0] != '-' {
			if operand < 0 {
				operand = i
			}
			continue
		}
		if a == "--" {
			if operand < 0 && i+1 < len(args) {
				operand = i + 1
			}
			break
		}
		if long, ok := strings.CutPrefix(a, "--"); ok {
			key, val, eq := strings.Cut(long, "=")
			switch {
			case key == "sandbox":
				return
			case len(key) >= 2 && strings.HasPrefix("expression", key):
				if !eq && i+1 < len(args) {
					i++
					val, lit = args[i].literal()
				}
				if !lit {
					w.dataUnknown(args[i].text(), name+" --expression") // a script only known at run time
					return
				}
				scripts = append(scripts, val)
			case len(key) >= 2 && strings.HasPrefix("file", key):
				fromFile = true
				if !eq {
					i++
				}
			case len(key) >= 2 && strings.HasPrefix("line-length", key) && !eq:
				i++
			}
			continue
		}
	cluster:
		for j := 1; j < len(a); j++ {
			switch a[j] {
			case 'i':
				break cluster // the rest of the word is the backup suffix
			case 'e', 'f', 'l':
				val := a[j+1:]
				if val == "" && i+1 < len(args) {
					i++
					val, lit = args[i].literal()
				}
				switch a[j] {
				case 'e':
					if !lit {
						w.dataUnknown(args[i].text(), name+" -e")
						return
					}
					scripts = append(scripts, val)
				case 'f':
					fromFile = true
				}
				break cluster
			}
		}
	}
	if fromFile {
		// A script file may hold e commands the parser cannot see.
		w.dataUnknown("{"+name+" -f script}", name+" -f")
	}
	if len(scripts) == 0 && !fromFile && operand >= 0 {
		t, lit := args[operand].literal()
		if !lit {
			w.dataUnknown(args[operand].text(), name)
			return
		}
		scripts = append(scripts, t)
	}
	if len(scripts) == 0 {
		return
	}
	sc, ok := sedExecs(strings.Join(scripts, "\n"))
	if !ok {
		// sed reads it otherwise than this does, or refuses it: either
		// way what it runs is not known.
		w.add(tool.Requirement{Kind: tool.KindCommandExecute, Target: scrub(strings.Join(scripts, "; ")),
			Unparsed: true, Via: name})
		return
	}
	// The files of r and w are read and written as if redirected; sed
	// names its standard streams /dev/stdin, /dev/stdout and /dev/stderr
	// (pseudoFiles).
	for _, f := range sc.reads {
		w.pathRequirements(tool.KindFilesystemRead, literalWord(f), in, name+" r")
	}
	for _, f := range sc.writes {
		w.pathRequirements(tool.KindFilesystemWrite, literalWord(f), in, name+" w")
	}
	for _, c := range sc.cmds {
		if c == "" {
			w.runsUnknown("{sed pattern space}", name+" e")
			continue
		}
		w.runLater(program{word: literalWord(c), shell: true, via: name + " e"}, in)
	}
}

// sedScript is what a GNU sed script does beyond editing its input.
type sedScript struct {
	// cmds are the commands it runs: the text of each "e COMMAND", and
	// "" for "e" alone or the s command's e flag.
	cmds []string
	// reads are the files of its r and R commands; writes those of its w
	// and W commands and of the s command's w flag.
	reads, writes []string
}

// sedExecs reads a GNU sed script. ok is false when the script is not
// one this reader understands.
func sedExecs(s string) (sc sedScript, ok bool) {
	i := 0
	// toEnd returns the rest of the line (a, i, c, r, w, e take it all).
	toEnd := func() string {
		start := i
		for i < len(s) && s[i] != '\n' {
			if s[i] == '\\' && i+1 < len(s) {
				i++
			}
			i++
		}
		return s[start:i]
	}
	skipBlanks := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	// fileName is the rest of the line after blanks, as sed reads the
	// file of r, R, w, W and the w flag (a ";" is part of the name).
	fileName := func() string {
		skipBlanks()
		start := i
		for i < len(s) && s[i] != '\n' {
			i++
		}
		return s[start:i]
	}
	// delimited reads text up to an unescaped delim; i is after it.
	delimited := func(delim byte) bool {
		for i < len(s) {
			switch s[i] {
			case '\\':
				i += 2
				continue
			case delim:
				i++
				return true
			case '\n':
				if delim != '\n' {
					return false
				}
			}
			i++
		}
		return false
	}
	address := func() bool {
		switch {
		case i >= len(s):
			return true
		case s[i] >= '0' && s[i] <= '9' || s[i] == '+' || s[i] == '~':
			i++
			for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
				i++
			}
			return true
		case s[i] == '$':
			i++
			return true
		case s[i] == '/' || s[i] == '\\':
			delim := byte('/')
			if s[i] == '\\' {
				if i+1 >= len(s) {
					return false
				}
				i++
				delim = s[i]
			}
			i++
			if !delimited(delim) {
				return false
			}
			for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		}
		return true
	}
	for {
		for i < len(s) && strings.IndexByte(" \t\n;", s[i]) >= 0 {
			i++
		}
		if i >= len(s) {
			return sc, true
		}
		if !address() {
			return sedScript{}, false
		}
		skipBlanks()
		if i < len(s) && s[i] == ',' {
			i++
			skipBlanks()
			if !address() {
				return sedScript{}, false
			}
			skipBlanks()
		}
		for i < len(s) && (s[i] == '!' || s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			return sedScript{}, false
		}
		c := s[i]
		i++
		switch c {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case '#', 'a', 'i', 'c':
			toEnd()
		case 'r', 'R':
			sc.reads = append(sc.reads, fileName())
		case 'w', 'W':
			sc.writes = append(sc.writes, fileName())
		case ':', 'b', 't', 'T', 'v', 'l', 'L', 'q', 'Q':
			for i < len(s) && s[i] != '\n' && s[i] != ';' && (c == ':' || s[i] != '}') {
				i++
			}
		case 'e':
			sc.cmds = append(sc.cmds, strings.TrimSpace(toEnd()))
		case 'y', 's':
			if i >= len(s) || s[i] == '\n' || s[i] == '\\' {
				return sedScript{}, false
			}
			delim := s[i]
			i++
			for part := 0; part < 2; part++ { // the pattern and the replacement
				if !delimited(delim) {
					return sedScript{}, false
				}
			}
			if c == 'y' {
				continue
			}
			for i < len(s) && strings.IndexByte("\n;}# \t", s[i]) < 0 {
				switch f := s[i]; {
				case f == 'e':
					sc.cmds = append(sc.cmds, "")
				case f == 'w':
					i++
					sc.writes = append(sc.writes, fileName())
					continue
				case strings.IndexByte("gpiImM0123456789", f) < 0:
					return sedScript{}, false
				}
				i++
			}
		default:
			return sedScript{}, false
		}
	}
}
