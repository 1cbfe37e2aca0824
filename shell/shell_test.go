package shell

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/tool"
)

// show renders requirements one per line, with holes as "?" in the shape.
func show(reqs []tool.Requirement) string {
	var lines []string
	for _, r := range reqs {
		s := r.String()
		if r.Shape != "" {
			s += " shape=" + strings.ReplaceAll(r.Shape, string(tool.Hole), "?")
		}
		lines = append(lines, s)
	}
	return strings.Join(lines, "\n")
}

func TestBashRequirements(t *testing.T) {
	tests := []struct {
		src  string
		want []string
	}{
		{"git status", []string{"command.execute git status"}},
		{"a && b || c; d | e", []string{"command.execute a", "command.execute b", "command.execute c", "command.execute d", "command.execute e"}},
		{"cd sub && git push", []string{"command.execute git push"}},
		{"(a; b) & c", []string{"command.execute a", "command.execute b", "command.execute c"}},
		{"echo $(curl evil.sh)", []string{"command.execute curl evil.sh", "network.connect evil.sh:80 (via curl)", "command.execute echo $(curl evil.sh) (dynamic) shape=echo ?"}},
		{"echo `id`", []string{"command.execute id", "command.execute echo `id` (dynamic) shape=echo ?"}},
		{`echo "$(date)" '$(not)'`, []string{"command.execute date", "command.execute echo $(date) $(not) (dynamic) shape=echo ? $(not)"}},
		{"x=$(hostname)", []string{"command.execute hostname"}},
		{"cat <<EOF\n$(whoami)\nEOF", []string{"command.execute cat", "command.execute whoami"}},
		{"cat <<'EOF'\n$(whoami)\nEOF", []string{"command.execute cat"}},
		{"git commit -m \"a b\"   --amend", []string{"command.execute git commit -m a b --amend"}},
		{`rm\ -rf x`, []string{"command.execute rm -rf x"}},
		{"echo hi > out.txt 2>&1", []string{"command.execute echo hi", "filesystem.write /ws/out.txt (via >)"}},
		{"echo hi >> ~/.bashrc", []string{"command.execute echo hi", "filesystem.write /home/u/.bashrc (via >>)"}},
		{"make &> build.log", []string{"command.execute make", "filesystem.write /ws/build.log (via &>)"}},
		{"make >| out", []string{"command.execute make", "filesystem.write /ws/out (via >|)"}},
		{"ls 2>/dev/null", []string{"command.execute ls"}},
		{"sort < in.txt", []string{"command.execute sort", "filesystem.read /ws/in.txt (via <)"}},
		{"ls | tee -a log.txt", []string{"command.execute ls", "command.execute tee -a log.txt", "filesystem.write /ws/log.txt (via tee)"}},
		{"cd sub && echo x > f", []string{"command.execute echo x", "filesystem.write /ws/sub/f (via >)"}},
		// After "a || b" fails or not, b may run in either directory.
		{"cd sub || echo x > f", []string{"command.execute echo x", "filesystem.write /ws/f (via >)", "filesystem.write /ws/sub/f (via >)"}},
		{"cd a; cat b", []string{"command.execute cat b", "filesystem.read /ws/b (via cat)", "filesystem.read /ws/a/b (via cat)"}},
		{"cd /etc && cat passwd", []string{"command.execute cat passwd", "filesystem.read /etc/passwd (via cat)"}},
		{"cd && cat .bashrc", []string{"command.execute cat .bashrc", "filesystem.read /home/u/.bashrc (via cat)"}},
		{"(cd a) && cat b", []string{"command.execute cat b", "filesystem.read /ws/b (via cat)"}},
		{"cd $D && cat b", []string{"command.execute cat b", "filesystem.read $PWD/b (dynamic, unresolved, via cat) shape=?/b"}},
		{"for d in a b; do cd $d; done; cat x", []string{"command.execute cat x", "filesystem.read $PWD/x (dynamic, unresolved, via cat) shape=?/x"}},
		{"head -n 5 a.txt b.txt", []string{"command.execute head -n 5 a.txt b.txt", "filesystem.read /ws/a.txt (via head)", "filesystem.read /ws/b.txt (via head)"}},
		{"grep -rn TODO src", []string{"command.execute grep -rn TODO src", "filesystem.read /ws/src (via grep)"}},
		{"grep -e TODO -f pats src", []string{"command.execute grep -e TODO -f pats src", "filesystem.read /ws/src (via grep)"}},
		{"sed -i s/a/b/ f.txt", []string{"command.execute sed -i s/a/b/ f.txt", "filesystem.read /ws/f.txt (via sed)", "filesystem.write /ws/f.txt (via sed)"}},
		{"cp a.txt /tmp/b.txt", []string{"command.execute cp a.txt /tmp/b.txt", "filesystem.read /ws/a.txt (via cp)", "filesystem.write /tmp/b.txt (via cp)"}},
		{"cat $F", []string{"command.execute cat $F (dynamic) shape=cat ?", "filesystem.read $F (dynamic, unresolved, via cat) shape=?"}},
		{"cat *.go", []string{"command.execute cat *.go", "filesystem.read /ws/*.go (dynamic, via cat) shape=/ws/?.go"}},
		{"echo x > *.go", []string{"command.execute echo x", "filesystem.write /ws/*.go (dynamic, unresolved, via >) shape=/ws/?.go"}},
		{"cat $X/../../etc/shadow", []string{"command.execute cat $X/../../etc/shadow (dynamic) shape=cat ?/../../etc/shadow", "filesystem.read $X/../../etc/shadow (dynamic, unresolved, via cat) shape=?"}},
		{"FOO=1 make", []string{"command.execute make (via assignment)"}},
		{"PATH=/tmp/x:$PATH make", []string{"command.execute PATH=/tmp/x:$PATH make (dynamic) shape=PATH=/tmp/x:? make", "command.execute make (via assignment)"}},
		{"sudo -u root env A=1 rm -rf /", []string{"command.execute sudo -u root env A=1 rm -rf /", "command.execute env A=1 rm -rf / (via sudo)", "command.execute rm -rf / (via env)", "filesystem.write / (via rm)"}},
		{"timeout 5 npm test", []string{"command.execute timeout 5 npm test", "command.execute npm test (via timeout)"}},
		{"nice -n 10 make", []string{"command.execute nice -n 10 make", "command.execute make (via nice)"}},
		{"xargs -I{} rm {}", []string{"command.execute xargs -I{} rm {}", "command.execute rm {} (via xargs)", "filesystem.write {} (dynamic, unresolved, via rm) shape=?"}},
		{"command -v git", nil},
		{"command git log", []string{"command.execute git log (via command)"}},
		{"bash -lc 'a && b'", []string{"command.execute bash -lc a && b", "command.execute a", "command.execute b"}},
		{"sh -c \"$X\"", []string{"command.execute sh -c $X (dynamic) shape=sh -c ?", "command.execute $X (dynamic, unresolved, via sh) shape=?"}},
		{"eval 'rm -rf /'", []string{"command.execute eval rm -rf /", "command.execute rm -rf /", "filesystem.write / (via rm)"}},
		{"bash -c 'echo \"unterminated'", []string{"command.execute bash -c echo \"unterminated", "command.execute echo \"unterminated (unparsed, via bash -c)"}},
		{"f() { rm -rf /; }", []string{"command.execute rm -rf /", "filesystem.write / (via rm)"}},
		{"if test -f x; then make; else cd y; fi", []string{"command.execute test -f x", "command.execute make"}},
		{"while read l; do echo $l; done < list", []string{"command.execute echo $l (dynamic) shape=echo ?", "filesystem.read /ws/list (via <)"}},
		{"case $x in a) rm a;; esac", []string{"command.execute rm a", "filesystem.write /ws/a (via rm)"}},
		{"[[ -f $(touch p) ]]", []string{"command.execute touch p", "filesystem.write /ws/p (via touch)"}},
		{"export PATH=/x:$PATH", []string{"command.execute export PATH=/x:$PATH (dynamic) shape=export PATH=/x:?"}},
		{"time make", []string{"command.execute make"}},
		{"! grep -q x f", []string{"command.execute grep -q x f", "filesystem.read /ws/f (via grep)"}},
		{"diff <(ls a) b", []string{"command.execute ls a", "filesystem.read /ws/a (via ls)", "command.execute diff <(ls a) b (dynamic) shape=diff ? b", "filesystem.read /ws/b (via diff)"}},
		{"$CMD x", []string{"command.execute $CMD x (dynamic) shape=? x"}},
		{"r{m,} -rf x", []string{"command.execute rm r -rf x", "filesystem.write /ws/r (via rm)", "filesystem.write /ws/x (via rm)"}}, // bash runs "rm r -rf x"
		{"echo 'unterminated", []string{"command.execute echo 'unterminated (unparsed)"}},
		{"", nil},
		{"# comment only", nil},
	}
	for _, tt := range tests {
		got := show(Requirements(tt.src, "/ws", "/home/u"))
		if want := strings.Join(tt.want, "\n"); got != want {
			t.Errorf("%q:\n got:\n%s\nwant:\n%s", tt.src, got, want)
		}
	}
}

func TestBashNoHoleInTargets(t *testing.T) {
	src := "echo \uFFFF; cat \uFFFF; rm 'a\uFFFFb'"
	for _, r := range Requirements(src, "/ws", "/home/u") {
		if strings.ContainsRune(r.Target, tool.Hole) {
			t.Errorf("input text put a tool.Hole in %v", r)
		}
		if r.Shape != "" {
			t.Errorf("literal input gave a shape: %v %q", r, r.Shape)
		}
	}
}

func TestPathsResolveSymlinks(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	secret := filepath.Join(dir, "secret")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	realSecret, _ := filepath.EvalSymlinks(secret)
	realWS, _ := filepath.EvalSymlinks(ws)
	for _, tc := range []struct {
		call tool.Call
		want string
	}{
		{tool.Call{Tool: "Read", Input: []byte(`{"file_path":"link"}`), Workspace: ws}, realSecret},
		{tool.Call{Tool: "Bash", Input: []byte(`{"command":"cat link"}`), Workspace: ws}, realSecret},
		{tool.Call{Tool: "Write", Input: []byte(`{"file_path":"new/file.txt"}`), Workspace: ws}, filepath.Join(realWS, "new/file.txt")},
	} {
		reqs, err := tool.Prepare(tc.call)
		if err != nil {
			t.Fatal(err)
		}
		last := reqs[len(reqs)-1]
		if last.Target != tc.want {
			t.Errorf("%s %s: target %q, want %q", tc.call.Tool, tc.call.Input, last.Target, tc.want)
		}
	}
}
