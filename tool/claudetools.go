package tool

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The preparers of Claude Code's newer tools that have effects the gate
// can derive: Monitor and PowerShell run commands, and the MCP resource
// tools read from a connected MCP server. Their fields are those of the
// Claude Agent SDK's sdk-tools.d.ts (pinned in
// integrations/claudecode/testdata/sdk).

// prepareMonitor prepares a Monitor call: a shell command whose output
// lines are events, decided exactly like Bash, or a WebSocket it opens,
// a network.connect to the socket's host and port.
func prepareMonitor(call Call) ([]Requirement, error) {
	var in struct {
		Command *string `json:"command"`
		WS      *struct {
			URL *string `json:"url"`
		} `json:"ws"`
	}
	if err := decodeInput(call, &in); err != nil {
		return nil, err
	}
	switch {
	case in.Command != nil && in.WS != nil:
		return nil, fmt.Errorf("%w: Monitor takes a \"command\" or a \"ws\", not both", ErrInvalidInput)
	case in.Command != nil:
		if *in.Command == "" {
			return nil, fmt.Errorf("%w: Monitor has an empty \"command\"", ErrInvalidInput)
		}
		return scriptRequirements(*in.Command, callDir(call), callHome(call))
	case in.WS != nil:
		if in.WS.URL == nil {
			return nil, fmt.Errorf("%w: Monitor's \"ws\" needs a \"url\" string", ErrInvalidInput)
		}
		target, err := socketTarget(*in.WS.URL)
		if err != nil {
			return nil, fmt.Errorf("%w: Monitor: %v", ErrInvalidInput, err)
		}
		return []Requirement{{Kind: KindNetworkConnect, Target: target}}, nil
	}
	return nil, fmt.Errorf("%w: Monitor needs a \"command\" string or a \"ws\" object", ErrInvalidInput)
}

// socketTarget is the host:port a ws:// or wss:// URL connects to: the
// same authority rules as http and https, which they upgrade from.
func socketTarget(raw string) (string, error) {
	scheme, rest, ok := strings.Cut(strings.TrimSpace(raw), ":")
	if !ok {
		return "", fmt.Errorf("url %q has no scheme; write it as wss://HOST/PATH", raw)
	}
	switch strings.ToLower(scheme) {
	case "wss":
		return URLTarget("https:" + rest)
	case "ws":
		return URLTarget("http:" + rest)
	}
	return "", fmt.Errorf("url %q: a monitor's socket is a ws or wss URL", raw)
}

// preparePowerShell prepares a PowerShell call. airlock has no
// PowerShell parser, so the script is one command.execute requirement
// marked Unparsed: deny and ask rules can still match its text, but
// nothing allows it without a person.
func preparePowerShell(call Call) ([]Requirement, error) {
	var in struct {
		Command *string `json:"command"`
	}
	if err := decodeInput(call, &in); err != nil {
		return nil, err
	}
	if in.Command == nil || *in.Command == "" {
		return nil, fmt.Errorf("%w: PowerShell needs a \"command\" string", ErrInvalidInput)
	}
	return []Requirement{{Kind: KindCommandExecute, Target: *in.Command, Unparsed: true}}, nil
}

// prepareMCPResource prepares ReadMcpResourceTool, ReadMcpResourceDirTool
// and ListMcpResourcesTool. Each is a read from one MCP server, so it is
// the tool.invoke mcp__SERVER__NAME, with NAME the Claude Code tool's:
// a rule about the whole server (mcp__SERVER) covers it, and
// mcp__SERVER__ReadMcpResourceTool(uri:GLOB) narrows it to resources.
// ListMcpResourcesTool without a server lists every server's resources
// and is the tool.invoke of its own name.
func prepareMCPResource(call Call) ([]Requirement, error) {
	var in struct {
		Server *string `json:"server"`
		URI    *string `json:"uri"`
	}
	if err := decodeInput(call, &in); err != nil {
		return nil, err
	}
	listing := call.Tool == "ListMcpResourcesTool"
	if !listing && (in.URI == nil || *in.URI == "") {
		return nil, fmt.Errorf("%w: %s needs a \"uri\" string", ErrInvalidInput, call.Tool)
	}
	if in.Server == nil || *in.Server == "" {
		if listing {
			return []Requirement{{Kind: KindToolInvoke, Target: call.Tool}}, nil
		}
		return nil, fmt.Errorf("%w: %s needs a \"server\" string", ErrInvalidInput, call.Tool)
	}
	if !mcpServerName(*in.Server) {
		return nil, fmt.Errorf("%w: %s: server %q is not an MCP server name (letters, digits, _ and -, no \"__\")", ErrInvalidInput, call.Tool, *in.Server)
	}
	args := "{}"
	if in.URI != nil {
		b, err := json.Marshal(map[string]string{"uri": *in.URI})
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalidInput, call.Tool, err)
		}
		args = string(b)
	}
	return []Requirement{{Kind: KindToolInvoke, Target: "mcp__" + *in.Server + "__" + call.Tool, Args: args}}, nil
}

// mcpServerName reports whether s can stand between "mcp__" and "__" in
// a tool name: Claude Code normalises server names to letters, digits,
// "_" and "-"; a "__" inside would make the name read as another server.
func mcpServerName(s string) bool {
	if strings.Contains(s, "__") || strings.HasPrefix(s, "_") || strings.HasSuffix(s, "_") {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
