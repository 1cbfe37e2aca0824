// Package jsonscan is the lexer under the walks of a tool call's JSON
// that encoding/json cannot do in one pass: tool's check of an input's
// keys and value types, and the Claude Code hook's check of its input
// (duplicate keys at any depth, the path of what is wrong). Each walk
// keeps its own grammar of objects and arrays and its own errors; the
// lexer reads the tokens they share, and reports only whether they are
// well formed.
package jsonscan

import (
	"encoding/json"
	"strings"
)

// Scanner reads Data from I on.
type Scanner struct {
	Data []byte
	I    int
}

// Space skips white space.
func (s *Scanner) Space() {
	for s.I < len(s.Data) {
		switch s.Data[s.I] {
		case ' ', '\t', '\n', '\r':
			s.I++
		default:
			return
		}
	}
}

// Str reads a string at '"' and returns its value; only a string with an
// escape is decoded (and allocated).
func (s *Scanner) Str() (string, bool) {
	if s.I >= len(s.Data) || s.Data[s.I] != '"' {
		return "", false
	}
	start := s.I
	escaped := false
	for s.I++; s.I < len(s.Data); s.I++ {
		switch s.Data[s.I] {
		case '\\':
			escaped = true
			s.I++
		case '"':
			s.I++
			raw := s.Data[start:s.I]
			if !escaped {
				return string(raw[1 : len(raw)-1]), true
			}
			var v string
			if err := json.Unmarshal(raw, &v); err != nil {
				return "", false
			}
			return v, true
		}
	}
	return "", false
}

// Scalar reads a number, true, false or null only as far as where it
// ends (the next delimiter) and returns where it started; ok is false
// when nothing is there.
func (s *Scanner) Scalar() (start int, ok bool) {
	start = s.I
	for s.I < len(s.Data) && !strings.ContainsRune(",}] \t\n\r", rune(s.Data[s.I])) {
		s.I++
	}
	return start, s.I > start
}

// After reads what follows an array's element or an object's member: a
// comma (more follow: end false) or close (end true); ok is false for
// anything else.
func (s *Scanner) After(close byte) (end, ok bool) {
	s.Space()
	if s.I >= len(s.Data) {
		return false, false
	}
	s.I++
	switch s.Data[s.I-1] {
	case ',':
		return false, true
	case close:
		return true, true
	}
	return false, false
}
