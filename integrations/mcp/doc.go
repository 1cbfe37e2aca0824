// Package mcp puts airlock's gate and sandbox behind the Model Context
// Protocol, on the official Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// Two adapters:
//
//   - [NewServer] is an MCP server whose tools (run_command, read_file,
//     write_file, edit_file, list_directory) are decided by the gate as
//     Claude Code's Bash, Read, Write, Edit and Glob would be, and run in
//     the sandbox with the workspace's profile (server.go, files.go).
//   - [Proxy] starts a downstream MCP server inside the sandbox, relays its
//     tools, resources and prompts, and decides every tools/call as the
//     tool mcp__NAME__TOOL (proxy.go).
//
// Both answer a denial with a tool result marked isError that carries the
// gate's reason, never a protocol failure, so a model can read why. When the
// gate says ask, they ask the person through MCP elicitation if the client
// declared it, and otherwise refuse with a reason (gatekeeper.go).
//
// What this package does not do: parse flags or build profiles (cmd/airlock),
// derive requirements (package tool), decide (package gate) or confine
// processes (package sandbox).
package mcp
