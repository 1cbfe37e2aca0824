package shell

import (
	"strings"
	"testing"

	"github.com/airlockhq/airlock/tool"
)

// canonText renders a command's canonical form as "NAME WORDS | FLAGS |
// REST", with "open" when a word may hold any flag.
func canonText(c *tool.CommandForm) string {
	if c == nil {
		return "<nil>"
	}
	s := strings.Join(append([]string{c.Name}, c.Words...), " ") + " | " + strings.Join(c.Flags, " ") +
		" | " + strings.ReplaceAll(strings.Join(c.Rest, " "), string(tool.Hole), "?")
	if c.Open {
		s += " (open)"
	}
	return s
}

func TestCanonicalForm(t *testing.T) {
	tests := []struct{ src, want string }{
		{"rm -rf x", "rm | -f -r | x"},
		{"rm -fr x", "rm | -f -r | x"},
		{"rm -r -f x", "rm | -f -r | x"},
		{"rm --recursive --force x", "rm | -f -r | x"},
		{"rm --rec --forc x", "rm | -f -r | x"},
		{"rm -Rfv x", "rm | -f -r -v | x"},
		{"rm x -fR", "rm | -f -r | x"},
		{"rm -- -rf", "rm |  | -- -rf"},
		{"rm $o x", "rm |  | ? x (open)"},
		{"/bin/rm -rf x", "rm | -f -r | x"},
		{"/usr/local/bin/rm -rf x", "rm | -f -r | x"},
		{"./rm -rf x", "./rm | -f -r | x"},
		{"'r'm -rf x", "rm | -f -r | x"},
		{"chmod -x f", "chmod |  | -x f"},
		{"chmod -R --verbose 777 d", "chmod | -R -v | 777 d"},
		{"curl -sSLo out https://h/", "curl | -L -S -s | -o out https://h/"},
		{"curl --output=out https://h/", "curl |  | -o out https://h/"},
		{"git -C d --no-pager -c a=b push -f origin", "git push | -f | origin"},
		{"git --git-dir=.git --work-tree . push --force", "git push | -f | "},
		{"/usr/bin/git send-pack origin", "git push |  | origin"},
		{"git commit --no-verify -am msg", "git commit | -a -n | -m msg"},
		{"git branch -D x", "git branch | -d -f | x"},
		{"git log --oneline -n 5", "git log |  | --oneline -n 5"},
		{"git $x push", "git |  | ? push"},
		{"npm --silent t", "npm test |  | --silent"},
		{"npm run-script build", "npm run |  | build"},
		{"make -j4", "make |  | -j4"},
		{"$x -rf", "<nil>"},
		{"r* -rf", "<nil>"},
		{"[ -f x ]", "test |  | -f x"},
		{"rm -* x", "rm |  | -? x (open)"},
		{"'rm -rf' x", "<nil>"},
	}
	for _, tt := range tests {
		var got string
		for _, r := range Requirements(tt.src, "/ws", "/home/u") {
			if r.Kind == tool.KindCommandExecute && r.Via == "" {
				got = canonText(r.Canon)
				break
			}
		}
		if got != tt.want {
			t.Errorf("%q: canonical %q, want %q", tt.src, got, tt.want)
		}
	}
}
