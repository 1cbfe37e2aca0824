package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"unicode/utf8"
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
	if err := json.Unmarshal(data, new(any)); err != nil {
		return Input{}, inputErr("is not valid JSON: %v", err)
	}
	if k := jsonKind(data); k != "an object" {
		return Input{}, inputErr("must be a JSON object, not %s", k)
	}
	if err := checkSurrogates(data); err != nil {
		return Input{}, err
	}
	if err := checkDuplicateKeys(data); err != nil {
		return Input{}, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return Input{}, inputErr("is not a JSON object: %v", err)
	}
	var in Input
	str := func(key string, dst *string, required bool) error {
		raw, ok := fields[key]
		if !ok || string(raw) == "null" {
			if required {
				return inputErr("has no %q", key)
			}
			return nil
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			return inputErr("field %q must be a string, not %s", key, jsonKind(raw))
		}
		if required && *dst == "" {
			return inputErr("has an empty %q", key)
		}
		return nil
	}
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
		if err := str(f.key, f.dst, f.required); err != nil {
			return in, err
		}
	}
	if in.HookEventName != EventPreToolUse {
		return in, inputErr("is for the %q event; airlock hook claude-code answers only PreToolUse (register it under \"PreToolUse\" in settings.json)", in.HookEventName)
	}
	raw, ok := fields["tool_input"]
	if !ok {
		return in, inputErr("has no \"tool_input\"")
	}
	if k := jsonKind(raw); k != "an object" {
		return in, inputErr("field \"tool_input\" must be an object, not %s", k)
	}
	in.ToolInput = raw
	if !filepath.IsAbs(in.Cwd) {
		return in, inputErr("field \"cwd\" %q is not an absolute path", in.Cwd)
	}
	in.Cwd = filepath.Clean(in.Cwd)
	return in, nil
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

// checkDuplicateKeys walks the whole document and fails on a key that
// appears twice in one object, and on anything after the first value.
func checkDuplicateKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := walkValue(dec, "$"); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return inputErr("has more after its JSON object")
	}
	return nil
}

func walkValue(dec *json.Decoder, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return inputErr("is not valid JSON: %v", err)
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return inputErr("is not valid JSON: %v", err)
			}
			key := kt.(string)
			if seen[key] {
				return inputErr("has the key %q twice in %s", key, path)
			}
			seen[key] = true
			if err := walkValue(dec, path+"."+key); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return inputErr("is not valid JSON: %v", err)
		}
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := walkValue(dec, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return inputErr("is not valid JSON: %v", err)
		}
	}
	return nil
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
