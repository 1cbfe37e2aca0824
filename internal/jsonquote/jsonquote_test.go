package jsonquote

import (
	"bytes"
	"encoding/json"
	"testing"
)

var texts = []string{"", "plain /path-1.2_x+y", `q"b`, `back\slash`, "<a>&b", "tab\tnl\nbs\bff\fbell\x07\x1f\x7f", "é", "\u2028\u2029", "bad\xffutf8", "~!@#$%^*()=[]{}|;:',.?`"}

func TestAppend(t *testing.T) {
	for _, s := range texts {
		want, _ := json.Marshal(s)
		if got := Append([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("Append(%q) = %s; want x%s", s, got, want)
		}
	}
}

func TestAppendNoHTMLEscape(t *testing.T) {
	for _, s := range texts {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got := AppendNoHTMLEscape([]byte("x"), s); string(got)+"\n" != "x"+want.String() {
			t.Errorf("AppendNoHTMLEscape(%q) = %s; want x%s", s, got, want.String())
		}
	}
}
