package audit

import (
	"encoding/json"
	"time"

	"github.com/airlockhq/airlock/internal/jsonquote"
)

// eventJSON returns json.Marshal(e), written field by field. Most
// processes that append write one line (a hook call, a run), and their
// first json.Marshal of an Event builds encoding/json's reflection tables
// for it, which costs more than the rest of the line's encoding. Detail,
// free-form, is still encoded by encoding/json. TestEventJSON compares the
// two for an Event with every field set, so a field added to Event and
// not here fails there.
func eventJSON(e *Event) ([]byte, error) {
	if y := e.Time.Year(); y < 0 || y > 9999 || e.Time.Location() != time.UTC {
		// encoding/json refuses a time beyond RFC 3339's years; let it
		// say so. Append stores UTC; any other zone is left to it too.
		return json.Marshal(e)
	}
	b := make([]byte, 0, 512)
	b = append(b, `{"time":"`...)
	b = e.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	b = member(b, "type", e.Type, false)
	b = member(b, "execution_id", e.ExecutionID, true)
	b = member(b, "session_id", e.SessionID, true)
	b = member(b, "tool_use_id", e.ToolUseID, true)
	b = member(b, "tool", e.Tool, true)
	b = member(b, "decision", e.Decision, true)
	b = member(b, "reason", e.Reason, true)
	b = member(b, "rule", e.Rule, true)
	b = member(b, "layer", e.Layer, true)
	if r := e.Requirement; r != nil {
		b = append(b, `,"requirement":{"kind":`...)
		b = jsonquote.Append(b, r.Kind)
		b = append(b, `,"target":`...)
		b = jsonquote.Append(b, r.Target)
		b = append(b, '}')
	}
	b = member(b, "profile", e.Profile, true)
	if len(e.Detail) > 0 {
		d, err := json.Marshal(e.Detail)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"detail":`...)
		b = append(b, d...)
	}
	return append(b, '}'), nil
}

// member appends ,"key":"value", or nothing for an empty omitempty one.
func member(b []byte, key, value string, omitEmpty bool) []byte {
	if omitEmpty && value == "" {
		return b
	}
	b = append(b, ',')
	b = jsonquote.Append(b, key)
	b = append(b, ':')
	return jsonquote.Append(b, value)
}
