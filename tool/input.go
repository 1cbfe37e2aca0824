package tool

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/airlockhq/airlock/internal/jsonscan"
)

// Tool input is decoded strictly. The gate decides on the value it reads,
// and the tool runs with the value its own parser reads; where the two
// parsers differ an agent can show the gate one command and run another.
// encoding/json matches keys case-insensitively and takes the last of
// duplicate keys; JavaScript's JSON.parse (Claude Code) matches exactly.
// So {"command":"ls","COMMAND":"rm -rf /"} is refused rather than read
// either way, as are duplicate keys, keys a tool does not have, values of
// the wrong type and text that is not UTF-8.

// inputFields are, by Claude Code's names, the input fields of the
// built-in tools that the gate reads, each "NAME:TYPE" (s string, n
// number, b boolean, a array, o object). A value of another type (null
// aside) refuses the call: the gate would read it one way and the tool
// another, or not at all. Any other key is tolerated, because Claude Code
// adds fields to its tools (Read's allow_large, Grep's -o, WebFetch's
// offset) and a field the gate does not read cannot change what it
// decides, with one exception: a key that differs from a listed one only
// in case still refuses the call, since it is a spelling meant to make
// the two parsers read different values. The list is checked against the
// Claude Agent SDK's published tool types (pinned in
// integrations/claudecode/testdata/sdk) by the claudecode tests.
var inputFields = map[string][]string{
	"Bash":                   {"command:s"},
	"PowerShell":             {"command:s"},
	"Monitor":                {"command:s", "ws:o"},
	"Read":                   {"file_path:s"},
	"Write":                  {"file_path:s"},
	"Edit":                   {"file_path:s"},
	"MultiEdit":              {"file_path:s"},
	"NotebookEdit":           {"notebook_path:s"},
	"NotebookRead":           {"notebook_path:s"},
	"LS":                     {"path:s"},
	"Glob":                   {"pattern:s", "path:s"},
	"Grep":                   {"pattern:s", "path:s", "glob:s", "type:s"},
	"WebFetch":               {"url:s", "prompt:s"},
	"ReadMcpResourceTool":    {"server:s", "uri:s"},
	"ReadMcpResourceDirTool": {"server:s", "uri:s"},
	"ListMcpResourcesTool":   {"server:s"},
}

// InputFields returns, for each built-in tool, the input fields the gate
// reads and the JSON type each must have ("NAME:TYPE" as above), for the
// tests that check them against Claude Code's published types.
func InputFields() map[string][]string {
	out := make(map[string][]string, len(inputFields))
	for k, v := range inputFields {
		out[k] = append([]string(nil), v...)
	}
	return out
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
	sc := inputScanner{Scanner: jsonscan.Scanner{Data: data}}
	sc.Space()
	if sc.I >= len(data) || data[sc.I] != '{' {
		return errors.New("not a JSON object")
	}
	var keys [16]string
	sc.kinds = sc.kindBuf[:0]
	top, err := sc.object(keys[:0], 1)
	if err != nil {
		return err
	}
	if sc.Space(); sc.I != len(data) {
		return errors.New("text after the JSON object")
	}
	known, ok := inputFields[toolName]
	if !ok {
		return nil
	}
	for i, k := range top {
		want, found := fieldType(known, k)
		if !found {
			if err := caseVariant(k, known); err != nil {
				return err
			}
			continue // a field the gate does not read
		}
		if got := sc.kinds[i]; got != want && got != 'z' {
			return fmt.Errorf("%q must be %s, not %s", k, kindNames[want], kindNames[got])
		}
	}
	return nil
}

var kindNames = map[byte]string{'s': "a string", 'n': "a number", 'b': "true or false", 'a': "an array", 'o': "an object", 'z': "null"}

// fieldType returns the type letter of field key.
func fieldType(known []string, key string) (byte, bool) {
	for _, f := range known {
		if len(f) == len(key)+2 && f[:len(key)] == key && f[len(key)] == ':' {
			return f[len(f)-1], true
		}
	}
	return 0, false
}

// caseVariant refuses key when it is a listed field spelt in another
// case: Claude Code reads the exact key, encoding/json either.
func caseVariant(key string, known []string) error {
	for _, f := range known {
		if name := f[:strings.LastIndexByte(f, ':')]; strings.EqualFold(name, key) {
			return fmt.Errorf("key %q is not %q: keys are matched exactly", key, name)
		}
	}
	return nil
}

// inputScanner walks the structure of a JSON text: objects, arrays and
// strings exactly, other values only as far as where they end.
type inputScanner struct {
	jsonscan.Scanner
	// kinds are the type letters of the top-level values, in key order.
	kinds   []byte
	kindBuf [16]byte
}

var errInputSyntax = errors.New("not valid JSON")

// object reads an object at "{" and returns its keys, appended to keys.
func (sc *inputScanner) object(keys []string, depth int) ([]string, error) {
	if depth > maxInputDepth {
		return nil, errors.New("nested too deeply")
	}
	sc.I++ // "{"
	first := len(keys)
	for {
		sc.Space()
		if sc.I >= len(sc.Data) {
			return nil, errInputSyntax
		}
		if sc.Data[sc.I] == '}' && len(keys) == first {
			sc.I++
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
		if sc.Space(); sc.I >= len(sc.Data) || sc.Data[sc.I] != ':' {
			return nil, errInputSyntax
		}
		sc.I++
		if depth == 1 {
			sc.Space()
			sc.kinds = append(sc.kinds, valueKind(sc.Data, sc.I))
		}
		if err := sc.value(depth); err != nil {
			return nil, err
		}
		end, ok := sc.After('}')
		if !ok {
			return nil, errInputSyntax
		}
		if end {
			return keys, nil
		}
	}
}

func (sc *inputScanner) value(depth int) error {
	sc.Space()
	if sc.I >= len(sc.Data) {
		return errInputSyntax
	}
	switch sc.Data[sc.I] {
	case '{':
		var keys [8]string
		_, err := sc.object(keys[:0], depth+1)
		return err
	case '[':
		if depth+1 > maxInputDepth {
			return errors.New("nested too deeply")
		}
		sc.I++
		sc.Space()
		if sc.I < len(sc.Data) && sc.Data[sc.I] == ']' {
			sc.I++
			return nil
		}
		for {
			if err := sc.value(depth + 1); err != nil {
				return err
			}
			end, ok := sc.After(']')
			if !ok {
				return errInputSyntax
			}
			if end {
				return nil
			}
		}
	case '"':
		_, err := sc.str()
		return err
	}
	// A number, true, false or null: up to the next delimiter.
	if _, ok := sc.Scalar(); !ok {
		return errInputSyntax
	}
	return nil
}

// str reads a string at '"' and returns its value.
func (sc *inputScanner) str() (string, error) {
	v, ok := sc.Str()
	if !ok {
		return "", errInputSyntax
	}
	return v, nil
}

// valueKind is the type letter of the JSON value starting at data[i].
func valueKind(data []byte, i int) byte {
	if i >= len(data) {
		return 0
	}
	switch data[i] {
	case '"':
		return 's'
	case '{':
		return 'o'
	case '[':
		return 'a'
	case 't', 'f':
		return 'b'
	case 'n':
		return 'z'
	}
	return 'n'
}
