package rules

import (
	"fmt"
	"testing"
	"time"

	"github.com/airlockhq/airlock/shell"
	"github.com/airlockhq/airlock/tool"
)

// FuzzExactMatchAllows: the exact rule an "always" answer saves for a
// command allows that command whenever its text matches the command's.
// Allow rules compare canonical forms, so the rule's text and the
// command's words must reach the same one.
func FuzzExactMatchAllows(f *testing.F) {
	for _, s := range []string{"rm -rf x", "git -C d push -f origin", "curl -sSLo o https://h/", "echo 'a  b' c",
		"ls a\\ b", "npm t -- --watch", "/bin/rm -Rf -- -x", "chmod -x f", "git commit -am 'x y'", "grep -e 'x?y' f",
		"rm --rec=1 x", "cp -t 'a b' c", "echo '*' '\\'", "busybox rm -fr y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		tm := time.AfterFunc(10*time.Second, func() { panic(fmt.Sprintf("SLOW %q", src)) })
		defer tm.Stop()
		for _, r := range shell.Requirements(src, "/ws", "/home/u") {
			// A glob where options may be ("rm -*") is only known when it
			// runs: no rule allows it, as none allows "rm $x".
			if r.Kind != tool.KindCommandExecute || !r.Exact() || r.Canon != nil && r.Canon.Open {
				continue
			}
			m, err := ExactMatch(r)
			if err != nil {
				continue
			}
			p, err := ParsePattern(m, testBase)
			if err != nil {
				continue
			}
			r.Tool = "Bash"
			if p.match(newSubject(&r), strict) && !p.Matches(r, false) {
				t.Fatalf("%s does not allow %v (from %q)", m, r, src)
			}
		}
	})
}
