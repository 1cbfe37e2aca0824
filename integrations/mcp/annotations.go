package mcp

import sdk "github.com/modelcontextprotocol/go-sdk/mcp"

// toolAnnotations are the hints of the server's five tools, for clients
// that decide by them whether to confirm a call. They are hints only: the
// gate decides every call whatever a client makes of them.
var toolAnnotations = map[string]*sdk.ToolAnnotations{
	// A command can do anything the sandbox lets it, including delete
	// files and, where the profile allows, reach the network.
	"run_command": {Title: "Run a command", DestructiveHint: ptr(true), IdempotentHint: false, OpenWorldHint: ptr(true)},
	"read_file":   {Title: "Read a file", ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	// Writing the same content twice leaves the same file.
	"write_file": {Title: "Write a file", DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)},
	// The replaced text is gone, and a second identical edit fails
	// (old_string no longer occurs).
	"edit_file":      {Title: "Edit a file", DestructiveHint: ptr(true), IdempotentHint: false, OpenWorldHint: ptr(false)},
	"list_directory": {Title: "List a directory", ReadOnlyHint: true, OpenWorldHint: ptr(false)},
}

func ptr[T any](v T) *T { return &v }
