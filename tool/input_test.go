package tool

import (
	"errors"
	"strings"
	"testing"
)

// Claude Code reads tool input with JSON.parse: exact keys, the last of
// duplicates. The gate refuses every input where that and encoding/json
// could disagree, and a field it reads given with another type.
func TestStrictInputRefuses(t *testing.T) {
	tests := []struct{ tool, input, why string }{
		{"Bash", `{"command":"rm -rf /","Command":"ls"}`, "differ only in case"},
		{"Bash", `{"COMMAND":"ls","command":"rm -rf /"}`, "differ only in case"},
		{"Bash", `{"command":"ls","command":"rm -rf /"}`, "duplicate key"},
		{"Bash", `{"command":"ls","comm\u0061nd":"rm -rf /"}`, "duplicate key"},
		{"Bash", `{"Command":"ls"}`, `is not "command"`},
		{"Bash", `{"command":["rm","-rf","/"]}`, `"command" must be a string, not an array`},
		{"Bash", `{"command":{"cmd":"ls"}}`, `"command" must be a string, not an object`},
		{"Bash", `{"command":1}`, `"command" must be a string`},
		{"Bash", `["ls"]`, "not a JSON object"},
		{"Bash", `{"command":"ls"} {"command":"rm"}`, "text after"},
		{"Bash", "{\"command\":\"ls\xff\"}", "UTF-8"},
		{"Read", `{"file_path":"/ws/a","FILE_PATH":"/ws/.env"}`, "differ only in case"},
		{"Read", `{"file_path":["/ws/.env"]}`, `"file_path" must be a string`},
		{"Read", `{"path":"/ws/.env"}`, `needs a "file_path" string`},
		{"Read", `{"File_Path":"/ws/.env"}`, `is not "file_path"`},
		{"Grep", `{"pattern":"x","glob":["*.go"]}`, `"glob" must be a string`},
		{"WebFetch", `{"url":"https://a.example/","prompt":["p"]}`, `"prompt" must be a string`},
		{"Monitor", `{"description":"d","timeout_ms":1,"ws":"wss://a.example/"}`, `"ws" must be an object`},
		{"ReadMcpResourceTool", `{"server":1,"uri":"file:///x"}`, `"server" must be a string`},
		{"Grep", `{"pattern":"x","path":"src","PATH":"secrets"}`, "differ only in case"},
		{"Grep", `{"pattern":"x","path":{"p":"secrets"}}`, `"path" must be a string`},
		{"WebFetch", `{"url":"https://a.example/","Url":"https://b.example/"}`, "differ only in case"},
		{"MultiEdit", `{"file_path":"/ws/a","edits":[{"old_string":"a","old_string":"b"}]}`, "duplicate key"},
		{"MultiEdit", `{"file_path":"/ws/a","edits":[{"x":{"k":1,"K":2}}]}`, "differ only in case"},
		{"mcp__github__create_issue", `{"title":"a","Title":"b"}`, "differ only in case"},
	}
	for _, tt := range tests {
		_, err := Prepare(Call{Tool: tt.tool, Input: []byte(tt.input), Workspace: "/ws", Home: "/home/u"})
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tt.why) {
			t.Errorf("%s %s: err %v, want %v saying %q", tt.tool, tt.input, err, ErrInvalidInput, tt.why)
		}
	}
}

func TestStrictInputAccepts(t *testing.T) {
	tests := []struct{ tool, input string }{
		{"Read", `{"file_path":"/ws/a","offset":10,"limit":20}`},
		{"Grep", `{"pattern":"x","path":"src","glob":"*.go","type":"go","output_mode":"content","-i":true,"-n":true,"-C":2,"multiline":false,"head_limit":5}`},
		{"MultiEdit", `{"file_path":"/ws/a","edits":[{"old_string":"a","new_string":"b"},{"old_string":"c","new_string":"d","replace_all":true}]}`},
		{"WebFetch", `{"url":"https://example.com/","prompt":"summarise"}`},
		// Fields the gate does not read are tolerated, whatever their
		// type: Claude Code adds them (allow_large, -o, offset) and its
		// own validation judges them.
		{"Read", `{"file_path":"/ws/a","allow_large":true,"pages":"1-3"}`},
		{"Read", `{"file_path":"/ws/a","path":"/ws/.env"}`},
		{"Grep", `{"pattern":"x","-o":true,"-i":"yes","offset":3}`},
		{"WebFetch", `{"url":"https://example.com/","prompt":"p","offset":2000}`},
		{"mcp__github__create_issue", `{"title":"a","labels":["x","y"],"meta":{"a":null}}`},
	}
	for _, tt := range tests {
		if _, err := Prepare(Call{Tool: tt.tool, Input: []byte(tt.input), Workspace: "/ws", Home: "/home/u"}); err != nil {
			t.Errorf("%s %s: %v", tt.tool, tt.input, err)
		}
	}
}
