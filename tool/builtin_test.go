package tool

import (
	"errors"
	"strings"
	"testing"
)

func TestPrepareTools(t *testing.T) {
	tests := []struct {
		tool, input string
		want        string
	}{
		{"Read", `{"file_path":"/ws/a.go"}`, "filesystem.read /ws/a.go"},
		{"Read", `{"file_path":"a.go"}`, "filesystem.read /ws/a.go"},
		{"Read", `{"file_path":"~/.ssh/id_rsa"}`, "filesystem.read /home/u/.ssh/id_rsa"},
		{"Write", `{"file_path":"/ws/b","content":"x"}`, "filesystem.write /ws/b"},
		{"Edit", `{"file_path":"/ws/b","old_string":"a","new_string":"b"}`, "filesystem.write /ws/b"},
		{"MultiEdit", `{"file_path":"/ws/../etc/x","edits":[]}`, "filesystem.write /etc/x"},
		{"NotebookEdit", `{"notebook_path":"/ws/n.ipynb"}`, "filesystem.write /ws/n.ipynb"},
		{"Glob", `{"pattern":"src/**/*.ts"}`, "filesystem.read /ws/src"},
		{"Glob", `{"pattern":"/etc/*.conf"}`, "filesystem.read /etc"},
		{"Glob", `{"pattern":"*.go","path":"/srv"}`, "filesystem.read /srv"},
		{"Grep", `{"pattern":"TODO","path":"lib"}`, "filesystem.read /ws/lib"},
		{"Grep", `{"pattern":"TODO"}`, "filesystem.read /ws"},
		{"WebFetch", `{"url":"https://Example.com/x","prompt":"p"}`, "network.connect example.com:443"},
		{"WebFetch", `{"url":"http://[::1]:8080/"}`, "network.connect [::1]:8080"},
		{"WebSearch", `{"query":"go"}`, "tool.invoke WebSearch"},
		{"mcp__github__create_issue", `{}`, "tool.invoke mcp__github__create_issue"},
	}
	for _, tt := range tests {
		reqs, err := Prepare(Call{Tool: tt.tool, Input: []byte(tt.input), Workspace: "/ws", Home: "/home/u"})
		if err != nil {
			t.Errorf("%s %s: %v", tt.tool, tt.input, err)
			continue
		}
		if got := show(reqs); got != tt.want {
			t.Errorf("%s %s: got %q, want %q", tt.tool, tt.input, got, tt.want)
		}
		for _, r := range reqs {
			if r.Tool != tt.tool {
				t.Errorf("%s: requirement tool %q", tt.tool, r.Tool)
			}
		}
	}
}

func TestPrepareFailsClosed(t *testing.T) {
	tests := []struct {
		tool, input string
		want        error
	}{
		{"Frobnicate", `{}`, ErrUnknownTool},
		{"mcp__nope", `{}`, ErrUnknownTool},
		{"mcp____x", `{}`, ErrUnknownTool},
		{"Bash", `{}`, ErrInvalidInput},
		{"Bash", `not json`, ErrInvalidInput},
		{"Read", `{"file_path":""}`, ErrInvalidInput},
		{"WebFetch", `{"url":"file:///etc/passwd"}`, ErrInvalidInput},
		{"WebFetch", `{"url":"https:///"}`, ErrInvalidInput},
		{"Glob", `{}`, ErrInvalidInput},
	}
	for _, tt := range tests {
		_, err := Prepare(Call{Tool: tt.tool, Input: []byte(tt.input), Workspace: "/ws"})
		if !errors.Is(err, tt.want) {
			t.Errorf("%s %s: err %v, want %v", tt.tool, tt.input, err, tt.want)
		}
	}
}

// show is the requirements one a line, as the tests compare them.
func show(reqs []Requirement) string {
	var lines []string
	for _, r := range reqs {
		lines = append(lines, r.String())
	}
	return strings.Join(lines, "\n")
}
