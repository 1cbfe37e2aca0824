package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// The configuration snippets a user pastes (README, airlock mcp --help)
// are valid JSON and start airlock with arguments it accepts.
func TestMCPConfigSnippets(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## MCP\n")
	if !ok {
		t.Fatal("README has no MCP section")
	}
	_, block, ok := strings.Cut(section, "```json\n")
	if !ok {
		t.Fatal("the README's MCP section has no JSON snippet")
	}
	block, _, _ = strings.Cut(block, "```")
	var so, se strings.Builder
	if code := dispatch([]string{"mcp", "--help"}, &so, &se); code != 0 {
		t.Fatalf("airlock mcp --help: %d %s", code, se.String())
	}
	help := so.String()
	helpJSON := help[strings.Index(help, "{"):]
	ws := t.TempDir()
	for name, snippet := range map[string]string{"README": block, "airlock mcp --help": helpJSON} {
		var cfg struct {
			MCPServers map[string]struct {
				Command string   `json:"command"`
				Args    []string `json:"args"`
			} `json:"mcpServers"`
		}
		if err := json.Unmarshal([]byte(snippet), &cfg); err != nil {
			t.Errorf("%s snippet is not valid JSON: %v\n%s", name, err, snippet)
			continue
		}
		if len(cfg.MCPServers) != 2 {
			t.Errorf("%s snippet: %d servers, want serve and proxy", name, len(cfg.MCPServers))
		}
		for server, s := range cfg.MCPServers {
			if s.Command != "airlock" || len(s.Args) < 2 || s.Args[0] != "mcp" {
				t.Errorf("%s snippet, %s: %s %q", name, server, s.Command, s.Args)
				continue
			}
			// The flags parse: --help after them prints the usage.
			args := append([]string(nil), s.Args...)
			for i, a := range args {
				if a == "/path/to/project" {
					args[i] = ws
				}
				if a == "--" {
					args = args[:i]
					break
				}
			}
			var out, errOut strings.Builder
			if code := dispatch(append(args, "--help"), &out, &errOut); code != 0 || !strings.Contains(out.String(), "Usage: airlock mcp "+s.Args[1]) {
				t.Errorf("%s snippet, %s: airlock %q --help: %d %s", name, server, args, code, errOut.String())
			}
		}
	}
}

func TestMCPUsageErrors(t *testing.T) {
	ws := t.TempDir()
	tests := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"mcp"}, 125, "name a command: proxy, serve"},
		{[]string{"mcp", "nope"}, 125, "unknown command"},
		{[]string{"mcp", "serve", "extra"}, 125, "takes no arguments"},
		{[]string{"mcp", "proxy", "--workspace", ws}, 125, "no server command"},
		{[]string{"mcp", "proxy", "--workspace", ws, "--managed", "-", "--user", "-", "--name", "a__b", "--", "true"}, 1, "letters, digits"},
		{[]string{"mcp", "serve", "--workspace", "/nonexistent/ws"}, 1, "does not exist"},
	}
	for _, tt := range tests {
		var so, se strings.Builder
		code := dispatch(tt.args, &so, &se)
		if code != tt.code || !strings.Contains(se.String(), tt.stderr) {
			t.Errorf("airlock %q: %d %q, want %d with %q", tt.args, code, se.String(), tt.code, tt.stderr)
		}
	}
}

func TestDefaultServerName(t *testing.T) {
	for in, want := range map[string]string{
		"mcp-server-filesystem":       "mcp-server-filesystem",
		"/usr/bin/node":               "node",
		"./server.py":                 "server",
		"my__server":                  "my_server",
		"weird name!":                 "weird-name-",
		"/opt/x/github-mcp-server.sh": "github-mcp-server",
	} {
		if got := defaultServerName(in); got != want {
			t.Errorf("defaultServerName(%q) = %q, want %q", in, got, want)
		}
	}
}
