package claudecode

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// TestOutputEncode: Output.encode writes what a json.Encoder with
// SetEscapeHTML(false) writes, for every verdict and for reasons json
// escapes, with and without updatedInput.
func TestOutputEncode(t *testing.T) {
	if n := reflect.TypeOf(Decision{}).NumField(); n != 4 {
		t.Fatalf("Decision has %d fields; Output.encode writes 4: teach it the new one", n)
	}
	var outs []Output
	for _, v := range []Verdict{VerdictAllow, VerdictAsk, VerdictDeny, VerdictDefer, "bogus"} {
		for _, reason := range []string{"command.execute ls -la needs approval: no rule allows it", `a <b> & "c" \ d`, "tab\tnl\n\u2028é\x01", "bad\xff"} {
			outs = append(outs, answer(v, reason, nil), answer(v, reason, json.RawMessage(`{"command": "x <y>",  "description":"d"}`)))
		}
	}
	outs = append(outs, Output{})
	for _, o := range outs {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(o); err != nil {
			t.Fatal(err)
		}
		got, err := o.encode()
		if err != nil || !bytes.Equal(got, want.Bytes()) {
			t.Errorf("encode(%+v) =\n%s (err %v)\nwant\n%s", o, got, err, want.Bytes())
		}
	}
}
