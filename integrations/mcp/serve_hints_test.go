package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// The five tools carry the hints clients decide confirmations by.
func TestServeToolAnnotations(t *testing.T) {
	ws := serverWorkspace(t)
	cs := connectStdio(t, nil, serveArgs(ws)...)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tl := range tools.Tools {
		b, _ := json.Marshal(tl.Annotations)
		got[tl.Name] = string(b)
	}
	for name, want := range map[string][]string{
		"run_command":    {`"destructiveHint":true`, `"readOnlyHint":false`, `"openWorldHint":true`},
		"read_file":      {`"readOnlyHint":true`, `"openWorldHint":false`},
		"write_file":     {`"destructiveHint":true`, `"idempotentHint":true`, `"readOnlyHint":false`},
		"edit_file":      {`"destructiveHint":true`, `"idempotentHint":false`, `"readOnlyHint":false`},
		"list_directory": {`"readOnlyHint":true`},
	} {
		for _, w := range want {
			if !strings.Contains(got[name], w) {
				t.Errorf("%s annotations %s lack %s", name, got[name], w)
			}
		}
	}
}

// list_directory shows what is in the directory on the host, not the
// placeholders the sandbox holds names with while it runs.
func TestServeListDirectoryShowsWhatIsThere(t *testing.T) {
	ws := serverWorkspace(t) // hello.txt and .airlock/policy.toml
	cs := connectStdio(t, nil, serveArgs(ws)...)
	res := call(t, cs, "list_directory", map[string]any{"path": ws})
	if res.IsError {
		t.Fatalf("list_directory: %s", text(res))
	}
	want := ".airlock/\nhello.txt\t20 bytes\n"
	if got := structured(t, res).Output; got != want {
		t.Errorf("list_directory %s:\n got %q\nwant %q", ws, got, want)
	}
}
