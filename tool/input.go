package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
// for a tool with known fields, with no other top-level key.
func checkInput(toolName string, data []byte) error {
	if !utf8.Valid(data) {
		return errors.New("not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != json.Delim('{') {
		return errors.New("not a JSON object")
	}
	keys, err := checkObject(dec, 1)
	if err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("text after the JSON object")
	}
	known, ok := inputFields[toolName]
	if !ok {
		return nil
	}
	for _, k := range keys {
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

// checkObject reads the members of an object whose "{" was read and
// returns its keys.
func checkObject(dec *json.Decoder, depth int) ([]string, error) {
	if depth > maxInputDepth {
		return nil, errors.New("nested too deeply")
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("an object key is not a string")
		}
		for _, k := range keys {
			switch {
			case k == key:
				return nil, fmt.Errorf("duplicate key %q", key)
			case strings.EqualFold(k, key):
				return nil, fmt.Errorf("keys %q and %q differ only in case", k, key)
			}
		}
		keys = append(keys, key)
		if err := checkValue(dec, depth); err != nil {
			return nil, err
		}
	}
	_, err := dec.Token() // "}"
	return keys, err
}

func checkValue(dec *json.Decoder, depth int) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		_, err := checkObject(dec, depth+1)
		return err
	case json.Delim('['):
		if depth+1 > maxInputDepth {
			return errors.New("nested too deeply")
		}
		for dec.More() {
			if err := checkValue(dec, depth+1); err != nil {
				return err
			}
		}
		_, err := dec.Token() // "]"
		return err
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
