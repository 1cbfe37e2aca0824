package approval

import (
	"strconv"
	"unicode/utf8"
)

// visible returns s as the prompt shows it, and whether it had to be
// escaped. Text a terminal shows as it is is returned as it is. Text that
// holds anything else (invalid UTF-8; C0 and C1 control characters and
// DEL, which move the cursor, erase and rewrite lines; bidirectional
// overrides and other format characters, which reorder or hide text;
// spaces other than U+0020) is returned as a Go string literal, in which
// those characters are escaped (\x1b, \u202e) and a quote or backslash
// cannot be mistaken for one of the escapes.
func visible(s string) (string, bool) {
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
