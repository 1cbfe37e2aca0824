package mcp

import (
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockhq/airlock/gate"
)

func TestFitOutput(t *testing.T) {
	denial := func() *sdk.CallToolResult { return deniedResult(gate.Decision{Reason: "no"}, "") }
	outcomeSchema := map[string]any{"type": "object", "properties": map[string]any{
		"status": map[string]any{"type": "string"}, "exit_code": map[string]any{"type": "integer"}}}
	strict := map[string]any{"type": "object", "required": []any{"success"},
		"properties": map[string]any{"success": map[string]any{"type": "boolean"}}, "additionalProperties": false}
	for _, tc := range []struct {
		name   string
		schema any
		keep   bool
	}{
		{"no output schema", nil, true},
		{"a schema the outcome satisfies", outcomeSchema, true},
		{"a schema the outcome does not satisfy", strict, false},
		{"a schema airlock cannot read", map[string]any{"type": 42}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := fitOutput(tc.schema, denial())
			if got := res.StructuredContent != nil; got != tc.keep {
				t.Errorf("structured content kept: %v, want %v", got, tc.keep)
			}
			if !res.IsError || len(res.Content) != 1 || res.Content[0].(*sdk.TextContent).Text != "airlock denied this call: no" {
				t.Errorf("the denial lost its text or isError: %+v", res)
			}
		})
	}
}
