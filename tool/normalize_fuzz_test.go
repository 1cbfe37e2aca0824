package tool

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzCheckInput: whatever checkInput accepts, encoding/json (the gate's
// reader, case-insensitive, last duplicate wins) and an exact-key reader
// (JSON.parse's rule) read the same command.
func FuzzCheckInput(f *testing.F) {
	for _, s := range []string{
		`{"command":"ls"}`, `{"command":"ls","Command":"rm"}`, `{"command":"a","command":"b"}`,
		`{"comm\u0061nd":"x"}`, `{"command":"ls","description":"d","timeout":5}`, `{"command":["x"]}`,
		`{"command":"ls"} x`, `{"command":"\"}"}`, `{"a":{"b":[1,{"c":2,"C":3}]}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if checkInput("Bash", []byte(in)) != nil {
			return
		}
		var gate struct {
			Command *string `json:"command"`
		}
		if json.Unmarshal([]byte(in), &gate) != nil {
			return
		}
		var exact map[string]json.RawMessage
		if err := json.Unmarshal([]byte(in), &exact); err != nil {
			t.Fatalf("%q: accepted, but not an object: %v", in, err)
		}
		var cmd *string
		if raw, ok := exact["command"]; ok {
			var s *string
			if json.Unmarshal(raw, &s) == nil {
				cmd = s
			}
		}
		if (cmd == nil) != (gate.Command == nil) || cmd != nil && *cmd != *gate.Command {
			t.Fatalf("%q: the gate reads %v, an exact reader %v", in, gate.Command, cmd)
		}
	})
}

// FuzzNormalizeHost: a normalised host normalises to itself, and holds
// no character a host name cannot.
func FuzzNormalizeHost(f *testing.F) {
	for _, s := range []string{"evil.example", "EVIL.example.", "evil\u3002example", "\uff45vil.example",
		"evi\u00adl.example", "xn--bcher-kva.example", "2130706433", "0x7f.1", "[::1]", "a..b", "%65vil"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		h, err := NormalizeHost(in)
		if err != nil {
			return
		}
		again, err := NormalizeHost(h)
		if err != nil || again != h {
			t.Fatalf("%q → %q → %q, %v", in, h, again, err)
		}
		if strings.ContainsAny(h, " /?#@\\\x00") || strings.ToLower(h) != h {
			t.Fatalf("%q → %q", in, h)
		}
	})
}
