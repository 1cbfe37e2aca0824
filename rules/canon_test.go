package rules

import (
	"testing"
	"time"

	"github.com/airlockhq/airlock/shell"
	"github.com/airlockhq/airlock/tool"
)

// TestCanonicalMatch: a Bash rule matches every spelling of its action,
// through both Pattern.Matches and a Set, and nothing else.
func TestCanonicalMatch(t *testing.T) {
	tests := []struct {
		rule, command string
		allow, deny   bool // strict (allow rules) and conservative (deny, ask) matches
	}{
		{"Bash(rm -rf:*)", "rm -fr x", true, true},
		{"Bash(rm -rf:*)", "rm -r -f x", true, true},
		{"Bash(rm -rf:*)", "rm --recursive --force x", true, true},
		{"Bash(rm -rf:*)", "rm -Rfv x", true, true},
		{"Bash(rm -rf:*)", "rm -f -i -R x", true, true},
		{"Bash(rm -rf:*)", "/bin/rm -rf x", true, true},
		{"Bash(rm -rf:*)", "./rm -rf x", false, true},
		{"Bash(rm -rf:*)", "rm -r x", false, false},
		{"Bash(rm -rf:*)", "rm -- -rf", false, false},
		{"Bash(rm -rf:*)", "rm $o x", false, true},
		{"Bash(rm -rf x)", "rm -fr x", true, true},
		{"Bash(rm -rf x)", "rm -rfv x", false, false},
		{"Bash(/bin/rm -rf:*)", "rm -fr x", true, true},
		{"Bash(git push:*)", "git -C d push", true, true},
		{"Bash(git push:*)", "git --git-dir=.git --no-pager -c a=b push origin", true, true},
		{"Bash(git push:*)", "/usr/bin/git push", true, true},
		{"Bash(git push:*)", "git send-pack origin", true, true},
		{"Bash(git push:*)", "git stash push", false, false},
		{"Bash(git push --force:*)", "git push origin -f", true, true},
		{"Bash(git push --force:*)", "git push --force-with-lease", false, false},
		{"Bash(git:*)", "/usr/bin/git status", true, true},
		{"Bash(git:*)", "/tmp/bin/git status", false, true},
		{"Bash(git status)", "git -C d status", true, true},
		// An allow rule that names git's global options keeps them: the
		// exact rule an "always" answer saves for one repository allows
		// no other (issue 23). A deny or ask rule still catches the
		// action with any global options.
		{"Bash(git -C /repo/a push origin main)", "git -C /repo/a push origin main", true, true},
		{"Bash(git -C /repo/a push origin main)", "git -C /repo/b push origin main", false, true},
		{"Bash(git -C /repo/a push origin main)", "git push origin main", false, true},
		{"Bash(git -C /repo/a push origin main)", "git -C /repo/a -C ../b push origin main", false, true},
		{"Bash(git -C /repo/a push origin main)", "git -C /repo/a -c x=y push origin main", false, true},
		{"Bash(git -C /repo/a push origin main)", "git -C $R push origin main", false, true},
		{"Bash(git --git-dir=/a/.git push:*)", "git --git-dir=/b/.git push", false, true},
		{"Bash(git --git-dir=/a/.git push:*)", "git --git-dir=/a/.git push origin", true, true},
		{"Bash(npm test:*)", "npm t", true, true},
		{"Bash(curl:*)", "/usr/local/bin/curl x", true, true},
		{"Bash(* --help)", "/usr/bin/git --help", true, true},
		{"Bash(ls)", "ls", true, true},
		{"Bash(ls)", "ls -la", false, false},
	}
	now := time.Now()
	for _, tt := range tests {
		var req tool.Requirement
		for _, r := range shell.Requirements(tt.command, "/ws", "/home/u") {
			if r.Kind == tool.KindCommandExecute && r.Via == "" {
				req = r
				req.Tool = "Bash"
				break
			}
		}
		p, err := ParsePattern(tt.rule, testBase)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Matches(req, false); got != tt.allow {
			t.Errorf("%s vs %q: strict %v, want %v", tt.rule, tt.command, got, tt.allow)
		}
		if got := p.Matches(req, true); got != tt.deny {
			t.Errorf("%s vs %q: conservative %v, want %v", tt.rule, tt.command, got, tt.deny)
		}
		for _, effect := range []Effect{Allow, Deny} {
			r, err := NewRule(effect, tt.rule, Workspace, testBase)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.allow
			if effect == Deny {
				want = tt.deny
			}
			if got := NewSet([]*Rule{r}).Match(effect, req, now) != nil; got != want {
				t.Errorf("%s %s vs %q: Set.Match %v, want %v", effect, tt.rule, tt.command, got, want)
			}
		}
	}
}
