package mcp_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// memoryPolicy allows the memory server named mem to create and read, and
// refuses deleting entities.
const memoryPolicy = `
[[rule]]
effect = "allow"
match  = "mcp__mem"

[[rule]]
effect = "deny"
match  = "mcp__mem__delete_entities"
reason = "the agent keeps what it remembered"
`

// A proxy denial of a tool that declares an outputSchema reaches the
// official TypeScript client as an error result carrying the reason:
// airlock's own structured content, which the tool's schema cannot hold,
// made the client throw -32602 instead.
func TestProxyDenialFitsOutputSchema(t *testing.T) {
	modules := nodeModules(t)
	ws := workspace(t)
	policy(t, ws, memoryPolicy)
	memory := filepath.Join(ws, "memory.jsonl")
	server := filepath.Join(modules, "@modelcontextprotocol", "server-memory", "dist", "index.js")
	args := []string{"stdio", airlockBin, "mcp", "proxy", "--name", "mem", "--workspace", ws, "--managed", "-", "--user", "-",
		"--allow-read", modules, "--env", "MEMORY_FILE_PATH=" + memory, "--", "node", server}
	entity := map[string]any{"name": "airlock", "entityType": "project", "observations": []string{"gates tool calls"}}
	r := runTSClient(t, []map[string]any{
		{"name": "create_entities", "arguments": map[string]any{"entities": []any{entity}}},
		{"name": "delete_entities", "arguments": map[string]any{"entityNames": []string{"airlock"}}},
		{"name": "open_nodes", "arguments": map[string]any{"names": []string{"airlock"}}},
	}, args...)
	res := r.Results
	// Positive control: an allowed call runs and the tool's own
	// structured content, which its schema holds, passes through.
	if res[0].IsError || !strings.Contains(readFile(t, memory), `"airlock"`) {
		t.Errorf("create_entities: %+v; memory file %q", res[0], readFile(t, memory))
	}
	if !res[1].IsError || !strings.Contains(res[1].Text, "the agent keeps what it remembered") {
		t.Errorf("denied delete_entities: %+v", res[1])
	}
	if res[1].Structured.Status != "" {
		t.Errorf("denied delete_entities carries airlock's structured content %+v, which its output schema cannot hold", res[1].Structured)
	}
	if res[2].IsError || !strings.Contains(res[2].Text, "gates tool calls") || !strings.Contains(readFile(t, memory), `"airlock"`) {
		t.Errorf("the entity did not survive the denied delete: %+v; memory file %q", res[2], readFile(t, memory))
	}
}
