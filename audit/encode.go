package audit

import (
	"encoding/json"
	"sort"
	"strconv"
	"time"

	"github.com/airlockhq/airlock/internal/jsonquote"
)

// eventJSON returns json.Marshal(e), written field by field. Most
// processes that append write one line (a hook call, a run), and their
// first json.Marshal of an Event builds encoding/json's reflection tables
// for it, which costs more than the rest of the line's encoding. Detail's
// values other than ints, strings and bools are still encoded by
// encoding/json. TestEventJSON compares the
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
		b = append(b, `,"detail":`...)
		var err error
		if b, err = appendDetail(b, e.Detail); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendDetail appends d as json.Marshal writes a map[string]any: keys
// sorted, ints, strings and bools written here, any other value by
// json.Marshal itself.
func appendDetail(b []byte, d map[string]any) ([]byte, error) {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonquote.Append(b, k)
		b = append(b, ':')
		switch v := d[k].(type) {
		case int:
			b = strconv.AppendInt(b, int64(v), 10)
		case string:
			b = jsonquote.Append(b, v)
		case bool:
			b = strconv.AppendBool(b, v)
		default:
			j, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			b = append(b, j...)
		}
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
