package tool

import (
	"os"
	"path/filepath"
	"strings"
	"unicode"
)

// Paths are judged by what the kernel would open, and by every name the
// call used on the way there. The kernel walks a path one component at a
// time and follows a symlink where it meets one, so "a/l/.." with l -> .
// is a's parent, not a, and ".env -> prod.env" opens prod.env even when
// prod.env does not exist yet (a write creates it). A lexical clean first
// (filepath.Clean, then EvalSymlinks) gets the first wrong, and
// EvalSymlinks of a dangling link fails and keeps the link's own name, so
// resolve does the walk itself.

// maxLinks is the kernel's limit on symlinks followed in one lookup
// (MAXSYMLINKS); past it the open fails with ELOOP.
const maxLinks = 40

// maxNames bounds the names a path keeps besides its target.
const maxNames = 8

// Canonical resolves the absolute path p as the kernel would: component by
// component, following every symlink that exists, ".." taken after the
// link before it is followed. Parts that do not exist yet are kept as
// written.
func Canonical(p string) string {
	target, _ := ResolveNames(p)
	return target
}

// ResolveNames returns the path p leads to (see Canonical) and the other
// names the walk went through: p as written (cleaned) and p after each
// symlink was replaced by its text. Deny rules are checked against all of
// them, so a rule about a link's name and a rule about where it points
// both hold. names is nil when p leads to itself.
func ResolveNames(p string) (target string, names []string) {
	written := filepath.Clean(p)
	todo := splitComponents(p)
	cur := "/"
	exists := true
	links := 0
	addName := func(n string) {
		n = filepath.Clean(n)
		if len(names) >= maxNames {
			return
		}
		for _, have := range names {
			if have == n {
				return
			}
		}
		names = append(names, n)
	}
	addName(written)
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		if c == ".." {
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		if !exists {
			cur = next
			continue
		}
		fi, err := os.Lstat(next)
		if err != nil {
			exists, cur = false, next
			continue
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		link, err := os.Readlink(next)
		if links++; err != nil || links > maxLinks {
			// The kernel would fail this lookup (ELOOP): keep the name.
			exists, cur = false, next
			continue
		}
		if filepath.IsAbs(link) {
			cur = "/"
		}
		todo = append(splitComponents(link), todo...)
		addName(filepath.Join(append([]string{cur}, todo...)...))
	}
	target = cur
	out := names[:0]
	for _, n := range names {
		if n != target {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return target, nil
	}
	return target, out
}

// splitComponents splits a path into its names, without the empty and "."
// ones (which the kernel skips) and keeping "..".
func splitComponents(p string) []string {
	parts := strings.Split(p, "/")
	out := parts[:0]
	for _, c := range parts {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// BadPathRune reports whether a path holds a rune no file name a person
// means to read holds: NUL (which ends the path the kernel sees, so the
// text after it is not what is opened), other control characters, and
// the invisible format characters that make a name read as another
// (zero-width space, bidi overrides): they hide what a path is from
// whoever approves it.
func BadPathRune(p string) bool {
	for _, r := range p {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || invisibleRune(r) {
			return true
		}
	}
	return false
}

// globRunes are the characters a shell or a glob library reads as a
// pattern: a path tool's path that holds one is not known exactly.
const globRunes = "*?[]{}"

// pathShape is the path p with every component that holds a glob or brace
// character replaced by a Hole, or "" when p has none: what could a
// pattern there stand for is unknown, so deny and ask rules read it as
// anything and allow rules cannot allow it.
func pathShape(p string) string {
	if !strings.ContainsAny(p, globRunes) {
		return ""
	}
	parts := strings.Split(p, "/")
	for i, c := range parts {
		if strings.ContainsAny(c, globRunes) {
			parts[i] = string(Hole)
		}
	}
	return strings.Join(parts, "/")
}

// invisibleRune reports the format characters that change how a name
// reads without showing: zero-width space and no-break space, word
// joiner, the byte order mark and the bidi embeddings, overrides and
// isolates. The joiners U+200C and U+200D are left: scripts and emoji
// use them.
func invisibleRune(r rune) bool {
	switch {
	case r == '\u200B', r == '\u2060', r == '\uFEFF', r == '\u200E', r == '\u200F', r == '\u061C':
		return true
	case r == Hole, r == '\uFFFE':
		return true // noncharacters; Hole marks the unknown parts of a shape
	case r >= '\u202A' && r <= '\u202E', r >= '\u2066' && r <= '\u2069':
		return true
	}
	return false
}
