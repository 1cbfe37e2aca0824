package rules

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airlockhq/airlock/shell"
	"github.com/airlockhq/airlock/tool"
)

func TestExactMatchIsNeverBroader(t *testing.T) {
	reqs := shell.Requirements("git push origin main && echo '*' && ls ab; grep -e 'x?y' f; npm test:*", "/ws", "/home/u")
	reqs = append(reqs,
		tool.Requirement{Kind: tool.KindFilesystemWrite, Target: "/ws/we*ird?/file"},
		tool.Requirement{Kind: tool.KindNetworkConnect, Target: "example.com:443"},
		tool.Requirement{Kind: tool.KindToolInvoke, Target: "mcp__github__create_issue"},
	)
	for _, r := range reqs {
		m, err := ExactMatch(r)
		if err != nil {
			t.Errorf("%v: %v", r, err)
			continue
		}
		if m == "Bash(*)" || m == "Bash" || strings.HasSuffix(m, ":*)") {
			t.Errorf("%v: %s is broader than the command", r, m)
		}
		p, err := ParsePattern(m, testBase)
		if err != nil {
			t.Errorf("%v: %s does not parse: %v", r, m, err)
			continue
		}
		rr := r
		if !p.Matches(rr, false) {
			t.Errorf("%s does not match the requirement it was made for: %v", m, r)
		}
		for _, other := range []string{r.Target + " x", r.Target + "x", "x" + r.Target, r.Target + "/x"} {
			o := r
			o.Target, o.Canon = other, nil // the canonical form was the old target's
			// A path rule covers what is inside the path (a directory's files).
			if p.Matches(o, false) && !(r.Kind != tool.KindCommandExecute && other == r.Target+"/x") {
				t.Errorf("%s also matches %q", m, other)
			}
		}
	}
	// A word with a blank in it, or an empty word, has no rule of its own:
	// "ls a\\ b" and "ls a b" share the target "ls a b".
	for _, r := range shell.Requirements("ls a\\ b; echo 'a  b'; touch ''", "/ws", "/home/u") {
		if r.Kind != tool.KindCommandExecute {
			continue
		}
		if m, err := ExactMatch(r); !errors.Is(err, ErrNotExact) {
			t.Errorf("%v: got %q, %v; want ErrNotExact", r, m, err)
		}
	}
	for _, r := range []tool.Requirement{
		{Kind: tool.KindCommandExecute, Target: "echo $X", Shape: "echo " + string(tool.Hole)},
		{Kind: tool.KindCommandExecute, Target: "echo 'x", Unparsed: true},
		{Kind: tool.KindFilesystemRead, Target: "$PWD/x", Shape: string(tool.Hole) + "/x", Unresolved: true},
		{Kind: "deployment.write", Target: "prod"},
	} {
		if m, err := ExactMatch(r); !errors.Is(err, ErrNotExact) {
			t.Errorf("%v: got %q, %v; want ErrNotExact", r, m, err)
		}
	}
}

func TestWriterAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".airlock", "policy.local.toml")
	w := Writer{Path: path}
	exp := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	recs := []NewRecord{
		{Effect: Allow, Match: `Bash(echo "quoted" \*)`},
		{Effect: Allow, Match: "Bash(make)", Expires: exp},
		{Effect: Deny, Match: "Read(//etc/hosts)", Reason: "said no\ntwice"},
	}
	if err := w.Append(recs...); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(recs[0]); err != nil { // a duplicate is not added again
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	rs, err := ParseFile(data, path, Local, testBase)
	if err != nil {
		t.Fatalf("written file does not parse: %v\n%s", err, data)
	}
	if len(rs) != 3 {
		t.Fatalf("%d rules, want 3:\n%s", len(rs), data)
	}
	if rs[0].Match != recs[0].Match || !rs[1].Expires.Equal(exp) || rs[2].Reason != "said no\ntwice" {
		t.Errorf("round trip: %+v %+v %+v", rs[0], rs[1], rs[2])
	}
	if err := w.Append(NewRecord{Effect: Allow, Match: "Bash("}); !errors.Is(err, ErrSyntax) {
		t.Errorf("bad match: %v", err)
	}
	if err := os.WriteFile(path, []byte("[[rule]\nbroken"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(NewRecord{Effect: Allow, Match: "Bash(ls)"}); err == nil {
		t.Error("appending to a broken file should fail, not overwrite it")
	}
	if data, _ := os.ReadFile(path); string(data) != "[[rule]\nbroken" {
		t.Error("broken file was changed")
	}
}

// TestWriterConcurrentProcesses runs many processes that each append
// rules to one file at once: the file must parse and hold every rule.
func TestWriterConcurrentProcesses(t *testing.T) {
	if path := os.Getenv("AIRLOCK_TEST_WRITER_PATH"); path != "" {
		t.Skip("child process")
	}
	const procs, perProc = 16, 5
	path := filepath.Join(t.TempDir(), ".airlock", "policy.local.toml")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var cmds []*exec.Cmd
	for i := 0; i < procs; i++ {
		c := exec.Command(exe, "-test.run=^TestWriterChild$", "-test.count=1")
		c.Env = append(os.Environ(), "AIRLOCK_TEST_WRITER_PATH="+path, "AIRLOCK_TEST_WRITER_ID="+strconv.Itoa(i),
			"AIRLOCK_TEST_WRITER_N="+strconv.Itoa(perProc))
		var out strings.Builder
		c.Stdout, c.Stderr = &out, &out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, c)
		t.Cleanup(func() {
			if t.Failed() {
				t.Log(out.String())
			}
		})
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("child: %v", err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := ParseFile(data, path, Local, testBase)
	if err != nil {
		t.Fatalf("file does not parse after concurrent writers: %v", err)
	}
	have := map[string]bool{}
	for _, r := range rs {
		have[r.Match] = true
	}
	for i := 0; i < procs; i++ {
		for j := 0; j < perProc; j++ {
			if m := childRule(i, j); !have[m] {
				t.Errorf("rule %s is missing", m)
			}
		}
	}
	if len(rs) != procs*perProc {
		t.Errorf("%d rules, want %d", len(rs), procs*perProc)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func childRule(proc, n int) string { return fmt.Sprintf("Bash(echo process %d answer %d)", proc, n) }

// TestWriterChild is the child of TestWriterConcurrentProcesses.
func TestWriterChild(t *testing.T) {
	path := os.Getenv("AIRLOCK_TEST_WRITER_PATH")
	if path == "" {
		t.Skip("only run as a child of TestWriterConcurrentProcesses")
	}
	id, _ := strconv.Atoi(os.Getenv("AIRLOCK_TEST_WRITER_ID"))
	n, _ := strconv.Atoi(os.Getenv("AIRLOCK_TEST_WRITER_N"))
	for j := 0; j < n; j++ {
		if err := (Writer{Path: path}).Append(NewRecord{Effect: Allow, Match: childRule(id, j)}); err != nil {
			t.Fatal(err)
		}
	}
}
