package shell

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/tool"
)

// TestBraceExpansionMatchesBash: the words a command is decided on are
// the words bash hands the program, brace expansion included, checked
// against bash itself.
func TestBraceExpansionMatchesBash(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	for _, words := range []string{
		"{push,origin,main}", "pu{sh,}", "{a,b}{c,d}", "x{1..3}", "'{a,b}'", `"x{y,z}"`, `\{a,b\}`,
		"{}", "a{b}", "{a,{b,c}}d", "{a..e..2}", "-I{}", "{,-}rf", "pre{x,y}post z{1,2}",
	} {
		out, err := exec.Command("bash", "-c", "printf '%s\\n' "+words).Output()
		if err != nil {
			t.Fatalf("bash: %v", err)
		}
		want := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		reqs := Requirements("printf '%s\\n' "+words, "/ws", "/home/u")
		if len(reqs) == 0 || reqs[0].Kind != tool.KindCommandExecute {
			t.Fatalf("%s: %v", words, reqs)
		}
		if got := reqs[0].Argv[2:]; !slices.Equal(got, want) {
			t.Errorf("%s: decided on %q, bash runs %q", words, got, want)
		}
	}
}

// TestProgramsOwnSpellings runs each spelling for real and checks that
// the program does what the analysis says it does.
func TestProgramsOwnSpellings(t *testing.T) {
	for _, p := range []string{"bash", "git"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s is not installed", p)
		}
	}
	ws, home := actingWorkspace(t)
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1"}
	gitcfg := func(args ...string) {
		c := exec.Command("git", append([]string{"config"}, args...)...)
		c.Dir, c.Env = ws, env
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git config %v: %v\n%s", args, err, out)
		}
	}
	gitcfg("alias.hi", "!echo alias-from-repo")
	gitcfg("--global", "alias.lg", "log --oneline -1")
	gitcfg("alias.status", "!echo never")
	tests := []struct {
		cmd, output string // what the real run prints
		want        string // the command requirement the analysis must have
	}{
		{"git hi", "alias-from-repo", "echo alias-from-repo"},
		{"git lg", "one", "git log --oneline -1"},
		{"git -c alias.yo='!echo from-c' yo", "from-c", "echo from-c"},
		{"git status --short", "", "git status --short"},
		{"/usr/bin/ech? globbed", "globbed", "/usr/bin/echo globbed"},
		{"/usr/*/echo globbed2", "globbed2", "/usr/bin/echo globbed2"},
		{"{echo,braced}", "braced", "echo braced"},
	}
	for _, tt := range tests {
		c := exec.Command("bash", "-c", tt.cmd)
		c.Dir, c.Env = ws, env
		out, err := c.CombinedOutput()
		if err != nil {
			t.Errorf("%s: %v\n%s", tt.cmd, err, out)
			continue
		}
		if !strings.Contains(string(out), tt.output) || strings.Contains(string(out), "never") {
			t.Errorf("%s printed %q, want %q: the premise is wrong", tt.cmd, out, tt.output)
		}
		reqs := Requirements(tt.cmd, ws, home)
		if !slices.ContainsFunc(reqs, func(r tool.Requirement) bool {
			return r.Kind == tool.KindCommandExecute && r.Target == tt.want
		}) {
			t.Errorf("%s: no command.execute %q among\n%s", tt.cmd, tt.want, show(reqs))
		}
		if strings.HasPrefix(tt.cmd, "git status") && strings.Contains(show(reqs), "never") {
			t.Errorf("an alias named like a git command was used:\n%s", show(reqs))
		}
	}
}

// TestNpmPrefixesAsNpmReadsThem asks the installed npm which command each
// abbreviation runs and compares with npmCommand.
func TestNpmPrefixesAsNpmReadsThem(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed")
	}
	home := t.TempDir()
	for word, want := range map[string]string{"pub": "publish", "publ": "publish", "exe": "exec",
		"unpub": "unpublish", "conf": "config", "t": "test", "inst": "install"} {
		if got := npmCommand(word); got != want {
			t.Errorf("npmCommand(%q) = %q, want %q", word, got, want)
		}
		c := exec.Command("npm", word, "--usage")
		c.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "npm_config_update_notifier=false"}
		c.Dir = home
		out, _ := c.CombinedOutput()
		if !strings.Contains(string(out), "npm "+want) {
			t.Errorf("npm %s --usage does not show npm %s: %s", word, want, out)
		}
	}
	if got := npmCommand("te"); got != "" {
		t.Errorf("npmCommand(te) = %q: npm refuses the ambiguous prefix", got)
	}
}
