package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunUsageErrors: every mistake on the command line ends airlock run
// with 125 (2 could be the command's own status) and exactly one line that
// names the flag and the fix, and nothing runs.
func TestRunUsageErrors(t *testing.T) {
	ws := t.TempDir()
	marker := filepath.Join(ws, "ran")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--timeout", "30"}, "--timeout 30: a duration needs a unit: use 30s"},
		{[]string{"--timeout", "soon"}, "use a duration such as 30s"},
		{[]string{"--timeout", "-5s"}, "--timeout -5s: use a positive duration"},
		{[]string{"--bogus"}, "unknown flag --bogus"},
		{[]string{"--pids", "x"}, "--pids x: use a whole number"},
		{[]string{"--pids", "0"}, "--pids 0: use a positive number"},
		{[]string{"--memory", "0"}, "--memory 0: use a positive size"},
		{[]string{"--cpu", "0"}, "--cpu 0: use a positive number"},
		{[]string{"--net", "none,example.com"}, "none cannot be combined"},
		{[]string{"--net", "ALL"}, "use --net all"},
		{[]string{"--net", "None"}, "use --net none"},
		{[]string{"--net", "example.com,all"}, "all comes first"},
		{[]string{"--net", "a.example,,b.example"}, "empty entry"},
		{[]string{"--env", "HOME=/tmp/x"}, "the sandbox sets HOME itself"},
		{[]string{"--env", "TMPDIR"}, "the sandbox sets TMPDIR itself"},
		{[]string{"--allow-write", "/nonexistent/dir"}, "--allow-write /nonexistent/dir: no such file or directory"},
		{[]string{"--allow-read", "/nonexistent/dir"}, "--allow-read /nonexistent/dir"},
		{[]string{"--report", "/nonexistent/dir/r.json"}, "--report /nonexistent/dir/r.json"},
	} {
		args := append([]string{"run", "--workspace", ws}, tc.args...)
		args = append(args, "--", "touch", marker)
		var so, se strings.Builder
		code := dispatch(args, &so, &se)
		if code != 125 || !strings.Contains(se.String(), tc.want) || strings.Count(se.String(), "\n") != 1 || so.Len() != 0 {
			t.Errorf("airlock run %v: exit %d, stdout %q, stderr %q; want 125 and one line with %q", tc.args, code, so.String(), se.String(), tc.want)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("airlock run %v ran the command despite the usage error", tc.args)
		}
	}
	// Positive control: the same command line without a mistake runs.
	var so, se strings.Builder
	if code := dispatch([]string{"run", "--workspace", ws, "--", "touch", marker}, &so, &se); code != 0 {
		t.Fatalf("control run: exit %d, stderr %q", code, se.String())
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("control run did not run the command: %v", err)
	}
}

// TestRunHelpAndVersion: help goes to stdout, spelt --flag, the same for
// "airlock help run"; --version names the commit (or says it is unknown).
func TestRunHelpAndVersion(t *testing.T) {
	for _, args := range [][]string{{"run", "--help"}, {"run", "-h"}, {"help", "run"}} {
		var so, se strings.Builder
		code := dispatch(args, &so, &se)
		out := so.String()
		if code != 0 || se.Len() != 0 || !strings.Contains(out, "Usage: airlock run") || !strings.Contains(out, "  --timeout duration") {
			t.Errorf("airlock %v: exit %d, stderr %q, stdout %q; want the help on stdout with --flag spelling", args, code, se.String(), out)
		}
		if strings.Contains(out, "\n  -timeout") {
			t.Errorf("airlock %v: help spells flags with one dash:\n%s", args, out)
		}
	}
	var so, se strings.Builder
	if code := dispatch([]string{"--version"}, &so, &se); code != 0 || !strings.HasPrefix(so.String(), "airlock ") || !strings.Contains(so.String(), " commit ") {
		t.Errorf("--version: exit %d, stdout %q", code, so.String())
	}
}

// TestRunReportToStdout: --report - writes the Result as JSON to stdout,
// after the command's own output; a file is opened before the run.
func TestRunReportToStdout(t *testing.T) {
	bin := buildAirlock(t)
	ws := t.TempDir()
	code, out, errOut := runCLI(t, bin, "run", "--workspace", ws, "--report", "-", "--", "echo", "hi")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	body, ok := strings.CutPrefix(out, "hi\n")
	if !ok {
		t.Fatalf("stdout %q: want the command's output first", out)
	}
	var res struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal([]byte(body), &res); err != nil || res.Status != "succeeded" {
		t.Fatalf("report on stdout %q: %v, status %q", body, err, res.Status)
	}
	// A file that already exists is replaced, not appended to.
	path := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(path, []byte(strings.Repeat("x", 100000)), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, bin, "run", "--workspace", ws, "--report", path, "--", "true"); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("report file: %v\n%.200s", err, data)
	}
}

// TestEveryCommandUsageErrors: a usage error in any command is one line
// on stderr naming what to write, nothing on stdout, and status 125 — but
// the hook's 2, which Claude Code reads as "block the call" (any other
// failure would let it through); asked-for help goes to stdout, status 0,
// spelt --flag. mcp, exec and serve are airlock-server's: its own
// TestServerCommandUsageErrors, and TestHandOff through airlock.
func TestEveryCommandUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 125, "name a command"},
		{[]string{"nope"}, 125, `unknown command "nope"`},
		{[]string{"doctor", "--bogus"}, 125, "unknown flag --bogus"},
		{[]string{"doctor", "--memory", "lots"}, 125, "--memory"},
		{[]string{"doctor", "extra"}, 125, "takes no arguments"},
		{[]string{"policy"}, 125, "name a command: explain, list, test"},
		{[]string{"policy", "nope"}, 125, `unknown command "nope"`},
		{[]string{"policy", "explain", "--bogus"}, 125, "unknown flag --bogus; run 'airlock policy explain --help'"},
		{[]string{"policy", "explain", "--tool"}, 125, "--tool needs a value, as in --tool NAME"},
		{[]string{"policy", "list", "x"}, 125, "takes no arguments"},
		{[]string{"policy", "test"}, 125, "exactly one rule FILE"},
		{[]string{"audit", "--follow=maybe"}, 125, "--follow maybe: use --follow alone"},
		{[]string{"audit", "--type", "nope"}, 125, "unknown event type"},
		{[]string{"audit", "extra"}, 125, "unexpected argument"},
		{[]string{"init"}, 125, "name the agent"},
		{[]string{"init", "codex"}, 125, "unknown agent"},
		{[]string{"init", "claude-code", "--bogus"}, 125, "unknown flag --bogus"},
		{[]string{"hook"}, 2, "name the agent"},
		{[]string{"hook", "claude-code", "--bogus"}, 2, "unknown flag --bogus"},
	} {
		var so, se strings.Builder
		code := dispatch(tc.args, &so, &se)
		if code != tc.code || !strings.Contains(se.String(), tc.want) || strings.Count(se.String(), "\n") != 1 || so.Len() != 0 {
			t.Errorf("airlock %q: exit %d, stdout %q, stderr %q; want %d and one line with %q", tc.args, code, so.String(), se.String(), tc.code, tc.want)
		}
	}
	for _, args := range [][]string{
		{"doctor", "--help"}, {"policy", "--help"}, {"policy", "explain", "--help"}, {"policy", "list", "-h"},
		{"audit", "--help"}, {"init", "--help"}, {"init", "claude-code", "--help"}, {"hook", "--help"},
	} {
		var so, se strings.Builder
		code := dispatch(args, &so, &se)
		if code != 0 || se.Len() != 0 || !strings.Contains(so.String(), "Usage: airlock") {
			t.Errorf("airlock %q: exit %d, stderr %q, stdout %.80q; want the help on stdout", args, code, se.String(), so.String())
		}
		if strings.Contains(so.String(), "\n  -") && !strings.Contains(so.String(), "\n  --") {
			t.Errorf("airlock %q: help spells flags with one dash:\n%s", args, so.String())
		}
	}
}
