package claudecode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// parseInputBefore is ParseInput as it was until it decoded the input in
// one walk: four decodings (into an interface, a json.Decoder's tokens,
// a map of raw values, each field). The tests below hold the new one to
// its answers, error text included, since the hook's answer quotes it.
func parseInputBefore(data []byte) (Input, error) {
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
	if err := checkDuplicateKeysBefore(data); err != nil {
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

// checkDuplicateKeysBefore walks the whole document and fails on a key that
// appears twice in one object, and on anything after the first value.
func checkDuplicateKeysBefore(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := walkValueBefore(dec, "$"); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return inputErr("has more after its JSON object")
	}
	return nil
}

func walkValueBefore(dec *json.Decoder, path string) error {
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
			if err := walkValueBefore(dec, path+"."+key); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return inputErr("is not valid JSON: %v", err)
		}
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := walkValueBefore(dec, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return inputErr("is not valid JSON: %v", err)
		}
	}
	return nil
}

// inputCases are inputs that reach each check of ParseInput, and the
// corners of the walk: escaped and duplicate keys at depth, numbers
// float64 cannot hold, several faults in one input (the order of the
// checks decides which message wins).
var inputCases = []string{
	``,
	` `,
	"\xff",
	`[]`,
	`"x"`,
	`null`,
	`1e400`,
	`{`,
	`{} x`,
	`{}{}`,
	`{}`,
	`{"a":1,"a":2}`,
	`{"a":{"b":1,"b":2}}`,
	`{"a":[{"b":1},{"c":1,"c":2}]}`,
	`{"a":[[1,{"x":1,"y":2,"x":3}]]}`,
	`{"\u0061":1,"a":2}`,
	`{"a\"b":1,"a\u0022b":2}`,
	`{"a":1e400}`,
	`{"a":1e400,"a":1}`,
	`{"a":"\ud800","a":1}`,
	`{"a":"\ud800","b":1e400}`,
	`{"a":"\udc00"}`,
	`{"a":"\ud83d\ude00"}`,
	`{"hook_event_name":"PreToolUse"}`,
	`{"hook_event_name":"PostToolUse","session_id":"s","tool_use_id":"u","tool_name":"Bash","cwd":"/w","tool_input":{}}`,
	`{"hook_event_name":"PreToolUse","session_id":"s","tool_use_id":"u","tool_name":"Bash","cwd":"/w","tool_input":{}}`,
	`{"hook_event_name":"PreToolUse","session_id":"s","tool_use_id":"u","tool_name":"Bash","cwd":"/w/../x/","tool_input":{"command":"ls"}, "transcript_path":null}`,
	` {"hook_event_name" : "PreToolUse" , "session_id":"s\n","tool_use_id":"\u00e9","tool_name":"Bash","cwd":"/w","tool_input" : { "command" : "ls" } , "x":[1,2,{}]} `,
	`{"hook_event_name":"PreToolUse","session_id":"","tool_use_id":"u","tool_name":"Bash","cwd":"/w","tool_input":{}}`,
	`{"hook_event_name":"PreToolUse","session_id":"s","tool_use_id":"u","tool_name":"Bash","cwd":"w","tool_input":{}}`,
	`{"hook_event_name":"PreToolUse","session_id":"s","tool_use_id":"u","tool_name":"Bash","cwd":"/w","tool_input":[]}`,
	`{"hook_event_name":"PreToolUse","session_id":"s","tool_use_id":"u","tool_name":"Bash","cwd":"/w"}`,
	`{"hook_event_name":"PreToolUse","session_id":1,"tool_use_id":"u","tool_name":"Bash","cwd":"/w","tool_input":{}}`,
	`{"hook_event_name":"PreToolUse","session_id":"s","tool_use_id":"u","tool_name":"Bash","cwd":"/w","permission_mode":true,"tool_input":{}}`,
	`{"hook_event_name":"PreToolUse","session_id":"s","tool_use_id":"u","tool_name":"Bash","cwd":"/w","tool_input":{"command":"a","command":"b"}}`,
	`{"Hook_event_name":"PreToolUse","session_id":"s","tool_use_id":"u","tool_name":"Bash","cwd":"/w","tool_input":{}}`,
	`{"hook_event_name":"PreToolUse","session_id":"s","tool_use_id":"u","tool_name":"Bash","cwd":"/w","tool_input":{"n":-0.5e-3,"t":true,"f":false,"z":null}}`,
}

// manyKeysInput is an object of n distinct keys and, last, the first
// one again: past manyKeys the walk's check is a map.
func manyKeysInput(n int) string {
	var b strings.Builder
	b.WriteString(`{"tool_input":{`)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	b.WriteString(`"k0":0}}`)
	return b.String()
}

// sameParse fails when ParseInput and parseInputBefore answer data
// differently.
func sameParse(t *testing.T, data []byte) {
	t.Helper()
	got, gerr := ParseInput(data)
	want, werr := parseInputBefore(data)
	if fmt.Sprint(gerr) != fmt.Sprint(werr) {
		t.Fatalf("ParseInput(%.200q): error %v; before it was %v", data, gerr, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseInput(%.200q) = %+v; before it was %+v", data, got, want)
	}
}

// TestParseInputAsBefore: the one-walk ParseInput gives every input the
// answer the four decodings gave, the message included.
func TestParseInputAsBefore(t *testing.T) {
	for _, c := range inputCases {
		sameParse(t, []byte(c))
	}
	for _, n := range []int{1, manyKeys - 1, manyKeys, manyKeys + 1, 100} {
		sameParse(t, []byte(manyKeysInput(n)))
	}
	files, err := filepath.Glob(filepath.Join("testdata", "hook", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no hook inputs in testdata/hook (%v)", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sameParse(t, bytes.ReplaceAll(data, []byte("$WS"), []byte("/ws")))
	}
	// The control: the comparison sees a difference.
	if _, err := ParseInput([]byte(`{"a":1,"a":2}`)); err == nil || !strings.Contains(err.Error(), `has the key "a" twice in $`) {
		t.Fatalf("a duplicate key: %v", err)
	}
}

// FuzzParseInputAsBefore is TestParseInputAsBefore over any bytes.
func FuzzParseInputAsBefore(f *testing.F) {
	for _, c := range inputCases {
		f.Add([]byte(c))
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "hook", "*.json"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(bytes.ReplaceAll(data, []byte("$WS"), []byte("/ws")))
	}
	f.Fuzz(func(t *testing.T, data []byte) { sameParse(t, data) })
}

// benchInput is bench/startup.sh's hook input.
var benchInput = []byte(`{"session_id":"bench","transcript_path":"/tmp/b/t.jsonl","cwd":"/tmp/b/ws","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls -la | grep -c src && echo done","description":"bench"},"tool_use_id":"bench"}`)

func BenchmarkParseInput(b *testing.B) {
	for b.Loop() {
		if _, err := ParseInput(benchInput); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseInputBefore(b *testing.B) {
	for b.Loop() {
		if _, err := parseInputBefore(benchInput); err != nil {
			b.Fatal(err)
		}
	}
}
