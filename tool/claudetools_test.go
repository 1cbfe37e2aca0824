package tool

import (
	"errors"
	"testing"
)

func TestClaudeToolRequirements(t *testing.T) {
	tests := []struct {
		tool, input string
		want        []string // Requirement.String of each
		args        string   // the first requirement's Args
	}{
		{"Monitor", `{"description":"d","timeout_ms":1000,"ws":{"url":"wss://Events.Example/feed?x=1","protocols":["v1"]}}`,
			[]string{"network.connect events.example:443"}, ""},
		{"Monitor", `{"description":"d","timeout_ms":1000,"ws":{"url":"ws://127.0.0.1:8080/"}}`,
			[]string{"network.connect 127.0.0.1:8080"}, ""},
		{"PowerShell", `{"command":"Remove-Item -Recurse C:\\x","description":"d"}`,
			[]string{`command.execute Remove-Item -Recurse C:\x (unparsed)`}, ""},
		{"ReadMcpResourceTool", `{"server":"github","uri":"repo://a/b"}`,
			[]string{"tool.invoke mcp__github__ReadMcpResourceTool"}, `{"uri":"repo://a/b"}`},
		{"ReadMcpResourceDirTool", `{"server":"fs-1","uri":"file:///ws/"}`,
			[]string{"tool.invoke mcp__fs-1__ReadMcpResourceDirTool"}, `{"uri":"file:///ws/"}`},
		{"ListMcpResourcesTool", `{"server":"github"}`, []string{"tool.invoke mcp__github__ListMcpResourcesTool"}, "{}"},
		{"ListMcpResourcesTool", `{}`, []string{"tool.invoke ListMcpResourcesTool"}, ""},
	}
	for _, tt := range tests {
		reqs, err := Prepare(Call{Tool: tt.tool, Input: []byte(tt.input), Workspace: "/ws", Home: "/home/u"})
		if err != nil {
			t.Errorf("%s %s: %v", tt.tool, tt.input, err)
			continue
		}
		var got []string
		for _, r := range reqs {
			got = append(got, r.String())
		}
		if len(got) < len(tt.want) {
			t.Errorf("%s %s: requirements %q, want %q", tt.tool, tt.input, got, tt.want)
			continue
		}
		for i, w := range tt.want {
			if got[i] != w {
				t.Errorf("%s %s: requirements %q, want %q", tt.tool, tt.input, got, tt.want)
				break
			}
		}
		if reqs[0].Args != tt.args || reqs[0].Tool != tt.tool {
			t.Errorf("%s %s: Args %q Tool %q, want %q %q", tt.tool, tt.input, reqs[0].Args, reqs[0].Tool, tt.args, tt.tool)
		}
	}
}

func TestClaudeToolRefuses(t *testing.T) {
	for _, tt := range []struct{ tool, input string }{
		{"Monitor", `{"description":"d","timeout_ms":1}`},
		{"Monitor", `{"command":"ls","ws":{"url":"wss://a.example/"}}`},
		{"Monitor", `{"ws":{"url":"https://a.example/"}}`},
		{"Monitor", `{"ws":{"url":"wss://a..example/"}}`},
		{"Monitor", `{"command":""}`},
		{"PowerShell", `{"description":"no command"}`},
		{"ReadMcpResourceTool", `{"server":"github"}`},
		{"ReadMcpResourceTool", `{"uri":"repo://a"}`},
		{"ReadMcpResourceTool", `{"server":"git__hub","uri":"repo://a"}`},
		{"ReadMcpResourceTool", `{"server":"a/b","uri":"repo://a"}`},
	} {
		if _, err := Prepare(Call{Tool: tt.tool, Input: []byte(tt.input), Workspace: "/ws", Home: "/home/u"}); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s %s: err %v, want %v", tt.tool, tt.input, err, ErrInvalidInput)
		}
	}
}
