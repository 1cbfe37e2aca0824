// Package visible makes text safe to print on a terminal: a file name, a
// host name or a command line that the sandboxed command, an agent or a
// log chose must never move the cursor, erase a line, start a new one
// or reorder what follows. Every line airlock prints with such a string
// in it goes through Text.
//
// It does not decide what is printed, nor quote text for a shell.
package visible

import (
	"strconv"
	"unicode/utf8"
)

// Text returns s as it may be shown: unchanged when a terminal shows it
// as it is, else as a Go string literal (see Escape).
func Text(s string) string {
	v, _ := Escape(s)
	return v
}

// Escape returns s as it may be shown, and whether it had to be escaped.
// Text that holds anything a terminal does not show as it is (invalid
// UTF-8; C0 and C1 control characters such as newline, carriage return
// and ESC, and DEL, which move the cursor, erase and rewrite lines;
// bidirectional overrides and other format characters, which reorder or
// hide text; line separators and spaces other than U+0020) is returned
// as a Go string literal, in which those characters are escaped (\n,
// \x1b, \u202e) and a quote or backslash cannot be mistaken for one of
// the escapes. The result is always one line.
func Escape(s string) (string, bool) {
	if !utf8.ValidString(s) {
		return strconv.Quote(s), true
	}
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return strconv.Quote(s), true
		}
	}
	return s, false
}
