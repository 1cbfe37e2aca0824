package tool

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Tool input is decoded strictly. The gate decides on the value it reads,
// and the tool runs with the value its own parser reads; where the two
// parsers differ an agent can show the gate one command and run another.
// encoding/json matches keys case-insensitively and takes the last of
// duplicate keys; JavaScript's JSON.parse (Claude Code) matches exactly.
// So {"command":"ls","COMMAND":"rm -rf /"} is refused rather than read
// either way, as are duplicate keys, keys a tool does not have, values of
// the wrong type and text that is not UTF-8.

// inputFields are the input fields of the built-in tools, by Claude Code's
// names. A key that is not listed refuses the call: it is either a
// spelling meant to confuse one of the parsers or a field this version
// does not know, whose meaning the gate cannot weigh.
var inputFields = map[string][]string{
	"Bash":         {"command", "description", "timeout", "run_in_background", "dangerouslyDisableSandbox"},
	"Read":         {"file_path", "offset", "limit", "pages"},
	"Write":        {"file_path", "content"},
	"Edit":         {"file_path", "old_string", "new_string", "replace_all"},
	"MultiEdit":    {"file_path", "edits"},
	"NotebookEdit": {"notebook_path", "cell_id", "new_source", "cell_type", "edit_mode"},
	"NotebookRead": {"notebook_path", "cell_id"},
	"LS":           {"path", "ignore"},
	"Glob":         {"pattern", "path"},
	"Grep": {"pattern", "path", "glob", "type", "output_mode", "-i", "-n", "-A", "-B", "-C",
		"context", "multiline", "head_limit", "offset"},
	"WebFetch": {"url", "prompt"},
}

// maxInputDepth bounds the nesting of a tool input; Claude Code's tools
// nest two levels (MultiEdit's edits).
const maxInputDepth = 32

// decodeInput unmarshals a call's input into v after checkInput, naming
// the tool on error.
func decodeInput(call Call, v any) error {
	if len(call.Input) == 0 {
		return fmt.Errorf("%w: %s needs a JSON object input", ErrInvalidInput, call.Tool)
	}
	if err := checkInput(call.Tool, call.Input); err != nil {
		return fmt.Errorf("%w: %s input: %v", ErrInvalidInput, call.Tool, err)
	}
	if err := json.Unmarshal(call.Input, v); err != nil {
		return fmt.Errorf("%w: %s input: %v", ErrInvalidInput, call.Tool, err)
	}
	return nil
}

// checkInput checks that data is one JSON object, valid UTF-8, without
// duplicate keys or keys that differ only in case at any level, and,
// for a tool with known fields, with no other top-level key. It runs on
// every call, so it scans the bytes itself rather than through
// json.Decoder's tokens; json.Unmarshal checks the syntax after it.
func checkInput(toolName string, data []byte) error {
	if !utf8.Valid(data) {
		return errors.New("not valid UTF-8")
	}
	sc := inputScanner{data: data}
	sc.space()
	if sc.i >= len(data) || data[sc.i] != '{' {
		return errors.New("not a JSON object")
	}
	var keys [16]string
	top, err := sc.object(keys[:0], 1)
	if err != nil {
		return err
	}
	if sc.space(); sc.i != len(data) {
		return errors.New("text after the JSON object")
	}
	known, ok := inputFields[toolName]
	if !ok {
		return nil
	}
	for _, k := range top {
		if !contains(known, k) {
			return unknownField(toolName, k, known)
		}
	}
	return nil
}

func unknownField(toolName, key string, known []string) error {
	for _, f := range known {
		if strings.EqualFold(f, key) {
			return fmt.Errorf("key %q is not %q: keys are matched exactly", key, f)
		}
	}
	sorted := append([]string(nil), known...)
	sort.Strings(sorted)
	return fmt.Errorf("unknown key %q (%s takes %s)", key, toolName, strings.Join(sorted, ", "))
}

// inputScanner walks the structure of a JSON text: objects, arrays and
// strings exactly, other values only as far as where they end.
type inputScanner struct {
	data []byte
	i    int
}

var errInputSyntax = errors.New("not valid JSON")

func (sc *inputScanner) space() {
	for sc.i < len(sc.data) {
		switch sc.data[sc.i] {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return
		}
	}
}

// object reads an object at "{" and returns its keys, appended to keys.
func (sc *inputScanner) object(keys []string, depth int) ([]string, error) {
	if depth > maxInputDepth {
		return nil, errors.New("nested too deeply")
	}
	sc.i++ // "{"
	first := len(keys)
	for {
		sc.space()
		if sc.i >= len(sc.data) {
			return nil, errInputSyntax
		}
		if sc.data[sc.i] == '}' && len(keys) == first {
			sc.i++
			return keys, nil
		}
		key, err := sc.str()
		if err != nil {
			return nil, err
		}
		for _, k := range keys[first:] {
			switch {
			case k == key:
				return nil, fmt.Errorf("duplicate key %q", key)
			case strings.EqualFold(k, key):
				return nil, fmt.Errorf("keys %q and %q differ only in case", k, key)
			}
		}
		keys = append(keys, key)
		if sc.space(); sc.i >= len(sc.data) || sc.data[sc.i] != ':' {
			return nil, errInputSyntax
		}
		sc.i++
		if err := sc.value(depth); err != nil {
			return nil, err
		}
		sc.space()
		if sc.i >= len(sc.data) {
			return nil, errInputSyntax
		}
		switch sc.data[sc.i] {
		case ',':
			sc.i++
		case '}':
			sc.i++
			return keys, nil
		default:
			return nil, errInputSyntax
		}
	}
}

func (sc *inputScanner) value(depth int) error {
	sc.space()
	if sc.i >= len(sc.data) {
		return errInputSyntax
	}
	switch sc.data[sc.i] {
	case '{':
		var keys [8]string
		_, err := sc.object(keys[:0], depth+1)
		return err
	case '[':
		if depth+1 > maxInputDepth {
			return errors.New("nested too deeply")
		}
		sc.i++
		sc.space()
		if sc.i < len(sc.data) && sc.data[sc.i] == ']' {
			sc.i++
			return nil
		}
		for {
			if err := sc.value(depth + 1); err != nil {
				return err
			}
			sc.space()
			if sc.i >= len(sc.data) {
				return errInputSyntax
			}
			sc.i++
			switch sc.data[sc.i-1] {
			case ',':
			case ']':
				return nil
			default:
				return errInputSyntax
			}
		}
	case '"':
		_, err := sc.str()
		return err
	}
	// A number, true, false or null: up to the next delimiter.
	start := sc.i
	for sc.i < len(sc.data) && !strings.ContainsRune(",}] \t\n\r", rune(sc.data[sc.i])) {
		sc.i++
	}
	if sc.i == start {
		return errInputSyntax
	}
	return nil
}

// str reads a string at '"' and returns its value; only a string with an
// escape is decoded (and allocated).
func (sc *inputScanner) str() (string, error) {
	if sc.i >= len(sc.data) || sc.data[sc.i] != '"' {
		return "", errInputSyntax
	}
	start := sc.i
	escaped := false
	for sc.i++; sc.i < len(sc.data); sc.i++ {
		switch sc.data[sc.i] {
		case '\\':
			escaped = true
			sc.i++
		case '"':
			sc.i++
			raw := sc.data[start:sc.i]
			if !escaped {
				return string(raw[1 : len(raw)-1]), nil
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return "", errInputSyntax
			}
			return s, nil
		}
	}
	return "", errInputSyntax
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
