// Package jsonquote appends a string quoted exactly as encoding/json
// quotes it, without encoding/json's reflection for the common case. It
// serves the hand-written encoders of the lines a short-lived process
// writes once (profile's fingerprint, audit's events, the Claude Code
// hook's answer), whose bytes must stay encoding/json's. It owns nothing else: numbers, objects and the
// choice of fields are the callers'.
package jsonquote

import (
	"bytes"
	"encoding/json"
)

// Append appends s as a JSON string, as json.Marshal(s) writes it. Plain
// printable ASCII is copied; a string with anything else (a quote, a
// backslash, the HTML characters json escapes, control bytes, non-ASCII,
// invalid UTF-8) is left to json.Marshal itself rather than to a copy of
// its escaping rules.
func Append(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// AppendNoHTMLEscape appends s as a JSON string as a json.Encoder with
// SetEscapeHTML(false) writes it: <, > and & stay as they are. Plain
// printable ASCII is copied; anything else is left to such an Encoder.
func AppendNoHTMLEscape(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			var q bytes.Buffer
			enc := json.NewEncoder(&q)
			enc.SetEscapeHTML(false)
			enc.Encode(s) // a string always encodes
			return append(b, bytes.TrimSuffix(q.Bytes(), []byte("\n"))...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
