package mcp_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestServeReadFileSymlinkFlipRace: a command keeps flipping a link
// between a file the rules deny reading (.env) and one they allow,
// while read_file reads the link again and again. The gate decides on
// where the link pointed when it decided; the read happens later. The
// secret must never come back.
//
// It holds because the sandbox carries the deny rule itself (the one
// workspace policy): a link flipped after the gate decided still meets
// the mask.
func TestServeReadFileSymlinkFlipRace(t *testing.T) {
	ws := workspace(t)
	policy(t, ws, `
[[rule]]
effect = "allow"
match  = "Bash(ln *)"

[[rule]]
effect = "allow"
match  = "Read(./**)"

[[rule]]
effect = "deny"
match  = "Read(./.env)"
`)
	const secret = "API_KEY=s3cr3t-value"
	for name, data := range map[string]string{".env": secret + "\n", "hello.txt": "hello\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The command names neither file: it flips d between two
	// directories, in one of which x is hello.txt and in the other a
	// link to .env; read_file reads d/x.
	for _, dir := range []string{"one", "two"} {
		if err := os.Mkdir(filepath.Join(ws, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{"d": "one", "one/x": "../hello.txt", "two/x": "../.env"} {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	reader := connectStdio(t, nil, serveArgs(ws)...)
	// Control: the rule denies the file read directly.
	if res := call(t, reader, "read_file", map[string]any{"path": ".env"}); !res.IsError || strings.Contains(text(res), secret) {
		t.Fatalf("control: read_file .env is not denied: %q", text(res))
	}
	flipper := connectStdio(t, nil, serveArgs(ws)...)
	var flip strings.Builder
	flip.WriteString("for i in")
	for i := 0; i < 400; i++ {
		flip.WriteString(" x")
	}
	flip.WriteString("; do ln -sfn two d; ln -sfn one d; done")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if res := call(t, flipper, "run_command", map[string]any{"command": flip.String(), "timeout_seconds": 60}); res.IsError {
				t.Errorf("the flipping command did not run: %q", text(res))
				return
			}
		}
	}()
	var hello, denied int
	for i := 0; i < 150; i++ {
		res := call(t, reader, "read_file", map[string]any{"path": "d/x"})
		out := text(res)
		if strings.Contains(out, secret) {
			t.Errorf("read %d of d/x returned the denied file: %q", i, out)
			break
		}
		switch {
		case !res.IsError && strings.Contains(out, "hello"):
			hello++
		case res.IsError:
			denied++
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("reads: %d of hello.txt, %d refused", hello, denied)
	if hello == 0 {
		t.Errorf("control: no read of d/x returned hello.txt; the race did not run")
	}
}
