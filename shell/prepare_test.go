package shell

import (
	"strings"
	"testing"

	"github.com/airlockhq/airlock/tool"
)

// TestPrepareShellTools: the Bash and Monitor calls tool.Prepare hands to
// this package, once it is linked in.
func TestPrepareShellTools(t *testing.T) {
	tests := []struct{ tool, input, want string }{
		{"Monitor", `{"description":"d","timeout_ms":1000,"command":"tail -f /ws/log"}`,
			"command.execute tail -f /ws/log\nfilesystem.read /ws/log (via tail)"},
		{"Bash", `{"command":"ls","description":"list","timeout":1000,"run_in_background":false}`, "command.execute ls"},
		{"Bash", " {\n \"command\" : \"ls\\u0020-la\" } \n", "command.execute ls -la"},
		{"Bash", `{"command":"ls","shell":"zsh"}`, "command.execute ls"},
		{"Bash", `{"command":"ls","timeout":"60000","run_in_background":"false"}`, "command.execute ls"},
	}
	for _, tt := range tests {
		reqs, err := tool.Prepare(tool.Call{Tool: tt.tool, Input: []byte(tt.input), Workspace: "/ws", Home: "/home/u"})
		if err != nil {
			t.Errorf("%s %s: %v", tt.tool, tt.input, err)
			continue
		}
		var got []string
		for _, r := range reqs {
			got = append(got, r.String())
		}
		if s := strings.Join(got, "\n"); s != tt.want {
			t.Errorf("%s %s: got %q, want %q", tt.tool, tt.input, s, tt.want)
		}
	}
}

func TestCwd(t *testing.T) {
	reqs, err := tool.Prepare(tool.Call{Tool: "Bash", Input: []byte(`{"command":"cat x"}`), Workspace: "/ws", Cwd: "sub"})
	if err != nil {
		t.Fatal(err)
	}
	if got := reqs[1].Target; got != "/ws/sub/x" {
		t.Errorf("relative Cwd: target %q", got)
	}
}
