package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlockhq/airlock/audit"
	"github.com/airlockhq/airlock/internal/syncbuf"
)

// writeAuditLog writes a small log with one event of each type and returns
// its path.
func writeAuditLog(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, e := range []audit.Event{
		{Time: at, Type: audit.TypeDecision, ExecutionID: "e1", Tool: "Bash", Decision: "deny",
			Requirement: &audit.Requirement{Kind: "command.execute", Target: "git push --force origin main"},
			Rule:        "Bash(git push --force *)", Layer: "project", Reason: "force-push is denied"},
		{Time: at, Type: audit.TypeSpawn, ExecutionID: "e2", Profile: "ab12", Detail: map[string]any{"pid": 42}},
		{Time: at, Type: audit.TypeEnforcement, ExecutionID: "e2", Layer: "egress",
			Requirement: &audit.Requirement{Kind: "net.connect", Target: "10.0.0.1:22"}, Reason: "private range\x1b[31m\nfake line"},
		{Time: at, Type: audit.TypeExit, ExecutionID: "e2", Detail: map[string]any{"code": 0}},
	} {
		if err := l.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func runAuditArgs(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = runAudit(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestAuditHumanOutput(t *testing.T) {
	path := writeAuditLog(t)
	code, out, errOut := runAuditArgs("--log", path)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want one per event:\n%s", len(lines), out)
	}
	for _, want := range []string{"decision", "deny", "Bash", "command.execute(git push --force origin main)",
		"rule=Bash(git push --force *)", "layer=project", "force-push is denied", "exec=e1",
		time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC).Local().Format("2006-01-02T15:04:05")} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("decision line %q lacks %q", lines[0], want)
		}
	}
	if !strings.HasPrefix(strings.Fields(lines[1])[1], "spawn") || !strings.Contains(lines[3], "exit") {
		t.Errorf("spawn and exit lines: %q, %q", lines[1], lines[3])
	}
	// An escape sequence or newline from the log must not reach the terminal.
	if strings.Contains(out, "\x1b") || !strings.Contains(lines[2], `"private range\x1b[31m\nfake line"`) {
		t.Errorf("enforcement line not quoted: %q", lines[2])
	}
}

func TestAuditJSONAndFilters(t *testing.T) {
	path := writeAuditLog(t)
	for _, tc := range []struct {
		args  []string
		types []string
	}{
		{nil, []string{"decision", "spawn", "enforcement", "exit"}},
		{[]string{"--type", "decision,exit"}, []string{"decision", "exit"}},
		{[]string{"--execution", "e2"}, []string{"spawn", "enforcement", "exit"}},
		{[]string{"--execution", "e2", "--type", "spawn"}, []string{"spawn"}},
		{[]string{"--execution", "nobody"}, nil},
	} {
		code, out, errOut := runAuditArgs(append([]string{"--json", "--log", path}, tc.args...)...)
		if code != 0 || errOut != "" {
			t.Fatalf("%v: exit %d, stderr %q", tc.args, code, errOut)
		}
		var types []string
		for line := range strings.Lines(out) {
			var e audit.Event
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("%v: line %q is not JSON: %v", tc.args, line, err)
			}
			types = append(types, e.Type)
		}
		if strings.Join(types, ",") != strings.Join(tc.types, ",") {
			t.Errorf("%v: types %v, want %v", tc.args, types, tc.types)
		}
	}
	_, out, _ := runAuditArgs("--json", "--log", path, "--type", "spawn")
	if !strings.Contains(out, `"detail":{"pid":42}`) || !strings.Contains(out, `"profile":"ab12"`) {
		t.Errorf("--json changed the event: %s", out)
	}
}

func TestAuditMissingLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none", "audit.jsonl")
	code, out, errOut := runAuditArgs("--log", path)
	if code != 0 || out != "" || errOut != "airlock audit: no audit log at "+path+" yet\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestAuditFlags: help on stdout; a usage error is one line on stderr,
// status 125.
func TestAuditFlags(t *testing.T) {
	t.Setenv("AIRLOCK_AUDIT_LOG", "/var/lib/example/audit.jsonl")
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--help"}, 0, "/var/lib/example/audit.jsonl"},
		{[]string{"-h"}, 0, "XDG_STATE_HOME"},
		{[]string{"--bogus"}, 125, "unknown flag --bogus"},
		{[]string{"--type", "decisions"}, 125, `unknown event type "decisions"`},
		{[]string{"--log"}, 125, "--log needs a value"},
		{[]string{"extra"}, 125, `unexpected argument "extra"`},
	} {
		code, out, errOut := runAuditArgs(tc.args...)
		said, quiet := errOut, out
		if tc.code == 0 {
			said, quiet = out, errOut
		}
		if code != tc.code || !strings.Contains(said, tc.says) || quiet != "" || (tc.code != 0 && strings.Count(errOut, "\n") != 1) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d saying %q", tc.args, code, out, errOut, tc.code, tc.says)
		}
	}
}

func TestAuditWarnsAboutTornLines(t *testing.T) {
	path := writeAuditLog(t)
	data, _ := os.ReadFile(path)
	os.WriteFile(path, append([]byte(`{"time":"2025-`+"\n"), data...), 0o600)
	code, out, errOut := runAuditArgs("--log", path)
	if code != 0 || strings.Count(out, "\n") != 4 || !strings.Contains(errOut, "skipped line(s) 1") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestAuditFollow(t *testing.T) {
	path := writeAuditLog(t)
	opts, code, ok := parseAuditFlags([]string{"--follow", "--log", path, "--type", "exit"}, os.Stdout, os.Stderr)
	if !ok {
		t.Fatalf("parse: exit %d", code)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncbuf.Buffer
	done := make(chan int, 1)
	go func() { done <- printAudit(ctx, opts, &out, &errOut) }()

	waitFor := func(n int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for strings.Count(out.String(), "\n") < n {
			if time.Now().After(deadline) {
				t.Fatalf("have %q, want %d lines", out.String(), n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor(1)
	l, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Append(audit.Event{Type: audit.TypeDecision, ExecutionID: "e3"}) // filtered out
	l.Append(audit.Event{Type: audit.TypeExit, ExecutionID: "e3"})
	waitFor(2)
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("follow exited %d, stderr %q", code, errOut.String())
	}
	if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 2 || !strings.Contains(lines[1], "exec=e3") {
		t.Errorf("followed output %q", out.String())
	}
}
