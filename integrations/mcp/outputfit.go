package mcp

import (
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// fitOutput makes a result airlock made itself (a denial, an unanswerable
// ask) valid for a relayed tool whose outputSchema is schema. Clients check
// structured content against the schema even when isError is set (the
// TypeScript SDK throws -32602 "Structured content does not match the
// tool's output schema", and the model never sees why it was refused), so
// airlock's own Outcome is kept only where the schema accepts it; the reason
// is always in the text content, which every client shows.
func fitOutput(schema any, res *sdk.CallToolResult) *sdk.CallToolResult {
	if res == nil || res.StructuredContent == nil || schema == nil {
		return res
	}
	if outputFits(schema, res.StructuredContent) {
		return res
	}
	out := *res
	out.StructuredContent = nil
	return &out
}

// outputFits reports whether v, as JSON, is valid against schema. A schema
// airlock cannot read or resolve does not fit: leaving the structured
// content out is always valid for an error result.
func outputFits(schema, v any) bool {
	sb, err := json.Marshal(schema)
	if err != nil {
		return false
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(sb, &s); err != nil {
		return false
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return false
	}
	vb, err := json.Marshal(v)
	if err != nil {
		return false
	}
	var inst any
	if err := json.Unmarshal(vb, &inst); err != nil {
		return false
	}
	return rs.Validate(inst) == nil
}
