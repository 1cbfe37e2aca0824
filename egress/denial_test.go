package egress

import (
	"strings"
	"testing"
)

// A name the sandbox looked up is printed on the run's stderr: a newline
// or an escape sequence in it must not start a line of its own or reach
// the terminal.
func TestDenialStringOneLine(t *testing.T) {
	for _, host := range []string{"evil\nairlock: all clear", "x\rforged", "\x1b[2Jwiped", "bad\xff"} {
		d := Denial{Protocol: ProtoDNS, Host: host, Reason: "not in allowlist"}
		s := d.String()
		if strings.ContainsAny(s, "\n\r\x1b") || !strings.HasPrefix(s, "blocked DNS lookup of \"") {
			t.Errorf("Denial{Host: %q}.String() = %q: not one escaped line", host, s)
		}
	}
	if got := (Denial{Protocol: ProtoTCP, Host: "plain.example", Port: 443, Reason: "not in allowlist"}).String(); got != "blocked connect to plain.example:443 (not in allowlist)" {
		t.Errorf("a plain name changed: %q", got)
	}
}
