package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"unicode/utf8"

	"github.com/airlockhq/airlock/internal/jsonscan"
)

// Input is what Claude Code writes on a PreToolUse hook's stdin. The
// fields are those of the hooks reference
// (https://code.claude.com/docs/en/hooks, "Hook input" and "PreToolUse
// input"): the common session_id, transcript_path, cwd, permission_mode
// and hook_event_name, then tool_name, tool_input and tool_use_id.
type Input struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path,omitempty"`
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode,omitempty"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
}

// EventPreToolUse is the only hook event this package answers.
const EventPreToolUse = "PreToolUse"

// DefaultMaxInput bounds the hook's stdin when Hook.MaxInput is 0. A Write
// call carries the whole file, so this is generous; larger input is
// blocked, not truncated.
const DefaultMaxInput = 4 << 20

// ErrInput is wrapped by every *InputError.
var ErrInput = errors.New("claudecode: unexpected hook input")

// InputError says what is wrong with the hook's stdin. The hook blocks
// the call with this message: input it does not understand is never
// allowed.
type InputError struct{ Problem string }

func (e *InputError) Error() string { return "the hook input " + e.Problem }

// Unwrap returns ErrInput.
func (e *InputError) Unwrap() error { return ErrInput }

func inputErr(format string, args ...any) error {
	return &InputError{Problem: fmt.Sprintf(format, args...)}
}

// ReadInput reads at most max bytes (0 means DefaultMaxInput) from r and
// parses them with ParseInput. More input than that is an *InputError.
func ReadInput(r io.Reader, max int64) (Input, error) {
	if max <= 0 {
		max = DefaultMaxInput
	}
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return Input{}, fmt.Errorf("claudecode: reading the hook input: %w", err)
	}
	if int64(len(data)) > max {
		return Input{}, inputErr("is larger than %d bytes", max)
	}
	return ParseInput(data)
}

// ParseInput decodes a PreToolUse hook input strictly: one JSON object and
// nothing after it, valid UTF-8 with no unpaired surrogate escapes (which
// would decode to U+FFFD here and to something else in Claude Code), no
// duplicate key at any depth (two parsers could each take a different
// one), every known field of its documented type, hook_event_name
// "PreToolUse", tool_input an object, cwd absolute, and session_id,
// tool_name and tool_use_id present. Fields it does not know are ignored:
// Claude Code adds common fields over time, and none of them can change
// what is decided.
func ParseInput(data []byte) (Input, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return Input{}, inputErr("is empty; Claude Code sends a JSON object on stdin")
	}
	if !utf8.Valid(data) {
		return Input{}, inputErr("is not valid UTF-8")
	}
	// json.Valid checks the syntax without building anything, and one
	// walk of the valid text finds keys given twice and the top-level
	// values. The checks answer in the order they always did: encoding/json's
	// refusal (of the syntax, or of a number float64 cannot hold), the
	// kind, the surrogates, the duplicates.
	w := inputWalker{Scanner: jsonscan.Scanner{Data: data}}
	if !json.Valid(data) || w.walk() != nil || w.badNumber {
		err := json.Unmarshal(data, new(any))
		if err == nil {
			err = errors.New("json.Valid refused it") // not reached: one scanner decides both
		}
		return Input{}, inputErr("is not valid JSON: %v", err)
	}
	if k := jsonKind(data); k != "an object" {
		return Input{}, inputErr("must be a JSON object, not %s", k)
	}
	if err := checkSurrogates(data); err != nil {
		return Input{}, err
	}
	if w.dup != nil {
		return Input{}, w.dup
	}
	var in Input
	for _, f := range []struct {
		key      string
		dst      *string
		required bool
	}{
		{"hook_event_name", &in.HookEventName, true},
		{"session_id", &in.SessionID, true},
		{"tool_use_id", &in.ToolUseID, true},
		{"tool_name", &in.ToolName, true},
		{"cwd", &in.Cwd, true},
		{"transcript_path", &in.TranscriptPath, false},
		{"permission_mode", &in.PermissionMode, false},
	} {
		raw, ok := w.field(f.key)
		if !ok || string(raw) == "null" {
			if f.required {
				return in, inputErr("has no %q", f.key)
			}
			continue
		}
		s, ok := jsonString(raw)
		if !ok {
			return in, inputErr("field %q must be a string, not %s", f.key, jsonKind(raw))
		}
		if f.required && s == "" {
			return in, inputErr("has an empty %q", f.key)
		}
		*f.dst = s
	}
	if in.HookEventName != EventPreToolUse {
		return in, inputErr("is for the %q event; airlock hook claude-code answers only PreToolUse (register it under \"PreToolUse\" in settings.json)", in.HookEventName)
	}
	raw, ok := w.field("tool_input")
	if !ok {
		return in, inputErr("has no \"tool_input\"")
	}
	if k := jsonKind(raw); k != "an object" {
		return in, inputErr("field \"tool_input\" must be an object, not %s", k)
	}
	in.ToolInput = bytes.Clone(raw)
	if !filepath.IsAbs(in.Cwd) {
		return in, inputErr("field \"cwd\" %q is not an absolute path", in.Cwd)
	}
	in.Cwd = filepath.Clean(in.Cwd)
	return in, nil
}

// jsonString decodes raw, a valid JSON value, as a string; false when it
// is not one. A string without escapes is its bytes (the input is valid
// UTF-8 and valid JSON, so they are what json.Unmarshal would give).
func jsonString(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// jsonKind names the JSON type of raw for messages.
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// checkSurrogates fails on a \uD800-\uDFFF escape inside a JSON string
// that is not part of a high-low pair. Go decodes one to U+FFFD, while
// Claude Code keeps it: the text decided would not be the text run.
func checkSurrogates(data []byte) error {
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if !inString {
			inString = c == '"'
			continue
		}
		switch c {
		case '"':
			inString = false
		case '\\':
			if i+1 < len(data) && data[i+1] == 'u' {
				r, ok := hex4(data, i+2)
				switch {
				case ok && r >= 0xD800 && r <= 0xDBFF:
					if lo, ok := hex4(data, i+8); ok && i+7 < len(data) && data[i+6] == '\\' && data[i+7] == 'u' && lo >= 0xDC00 && lo <= 0xDFFF {
						i += 11
						continue
					}
					return inputErr("has an unpaired UTF-16 surrogate escape \\u%04X", r)
				case ok && r >= 0xDC00 && r <= 0xDFFF:
					return inputErr("has an unpaired UTF-16 surrogate escape \\u%04X", r)
				}
			}
			i++ // skip the escaped byte
		}
	}
	return nil
}

// hex4 reads four hex digits at data[i:].
func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		var v byte
		switch {
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}
