package jsonquote

import (
	"encoding/json"
	"testing"
)

func TestAppend(t *testing.T) {
	for _, s := range []string{"", "plain /path-1.2_x+y", `q"b`, `back\slash`, "<a>&b", "tab\tnl\nbs\bff\fbell\x07\x1f\x7f", "é", "\u2028\u2029", "bad\xffutf8", "~!@#$%^*()=[]{}|;:',.?`"} {
		want, _ := json.Marshal(s)
		if got := Append([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("Append(%q) = %s; want x%s", s, got, want)
		}
	}
}
