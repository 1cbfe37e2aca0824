package providertest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlockhq/airlock/provider"
)

// execBounded is exec with a watchdog: a provider that blocks on a file
// the run left (a FIFO) never returns, so the test says so instead of
// hanging until the test binary's own timeout.
func execBounded(t *testing.T, h *provider.Handle, req provider.Request) provider.Result {
	t.Helper()
	done := make(chan provider.Result, 1)
	go func() {
		res, err := h.Execute(t.Context(), req)
		if err != nil {
			t.Errorf("execute: %v", err)
		}
		done <- res
	}()
	select {
	case res := <-done:
		return res
	case <-time.After(req.Timeout + 30*time.Second):
		t.Fatalf("the execution did not return within its all-in deadline (%s) and 30s more", req.Timeout)
		return provider.Result{}
	}
}

// workingDir: the run's user can write its working directory and read
// the inputs placed there, whatever mode the image gives the directory
// the provider mounts there.
func workingDir(t *testing.T, tg Target) {
	c := tg.catalog(t, `timeout = "30s"`)
	h := handle(t, c, provider.Identity{})
	res := exec(t, h, provider.Request{Lang: provider.LangSh, Code: "cat a b && echo w > made && cat made",
		Files: map[string][]byte{"a": []byte("1\n"), "b": []byte("2\n")}, OutputFiles: []string{"made"}})
	want(t, res, provider.StatusSucceeded)
	if res.Stdout != "1\n2\nw\n" || string(res.OutputFiles["made"]) != "w\n" {
		t.Errorf("stdout %q, output files %q, file errors %v", res.Stdout, res.OutputFiles, res.FileErrors)
	}
}

// linksAndFifos is the attack of one call on the next in a kept scope:
// call 1 leaves links to host files, FIFOs and a directory under the
// names call 2 moves in and out. Nothing may be written or read through
// a link (host-side evidence: the host file's content, the secret never
// returned), nothing may block (a FIFO has no other end), and each
// refusal is named in the Result.
func linksAndFifos(t *testing.T, tg Target) {
	dir := t.TempDir()
	hostFile := filepath.Join(dir, "host-file")
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(hostFile, []byte("original"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("host-secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := tg.catalog(t, `scope = "session"`+"\ntimeout = \"20s\"")
	h := handle(t, c, provider.Identity{User: "u", Session: "links"})
	want(t, exec(t, h, sh(fmt.Sprintf(
		"ln -s %q data.csv && ln -s %q out.csv && mkfifo in.fifo out.fifo && mkdir in.dir", hostFile, secret))),
		provider.StatusSucceeded)
	// Control: what call 1 left is there for the next call of the scope.
	res := exec(t, h, sh("readlink data.csv; [ -p in.fifo ] && echo fifo"))
	if res.Stdout != hostFile+"\nfifo\n" {
		t.Fatalf("control: the links and FIFOs did not outlive their call (%q %q); the test shows nothing", res.Stdout, res.Stderr)
	}

	res = execBounded(t, h, provider.Request{Lang: provider.LangSh, Code: "echo ran", Timeout: 20 * time.Second,
		Files: map[string][]byte{"data.csv": []byte("attacker"), "in.fifo": []byte("x"), "in.dir": []byte("x"), "plain": []byte("ok")}})
	if b, _ := os.ReadFile(hostFile); string(b) != "original" {
		t.Errorf("the host file behind the link was written: %q", b)
	}
	want(t, res, provider.StatusFailed)
	if res.Stdout != "" || res.ExitCode != -1 {
		t.Errorf("the program ran although its inputs were refused: exit %d, stdout %q", res.ExitCode, res.Stdout)
	}
	for _, name := range []string{"data.csv", "in.fifo", "in.dir"} {
		if res.FileErrors[name] == "" {
			t.Errorf("input %s over what call 1 left is not refused in the Result: %v", name, res.FileErrors)
		}
	}
	if _, bad := res.FileErrors["plain"]; bad {
		t.Errorf("a plain input was refused: %v", res.FileErrors)
	}

	res = execBounded(t, h, provider.Request{Lang: provider.LangSh, Code: "echo fine > plain.out", Timeout: 20 * time.Second,
		OutputFiles: []string{"out.csv", "out.fifo", "plain.out"}})
	want(t, res, provider.StatusSucceeded)
	for name, data := range res.OutputFiles {
		if strings.Contains(string(data), "host-secret") {
			t.Errorf("output %s returned the host file behind a link", name)
		}
	}
	if string(res.OutputFiles["plain.out"]) != "fine\n" || len(res.OutputFiles) != 1 {
		t.Errorf("output files %q, want only plain.out", res.OutputFiles)
	}
	for _, name := range []string{"out.csv", "out.fifo"} {
		if res.FileErrors[name] == "" {
			t.Errorf("output %s is not refused in the Result: %v", name, res.FileErrors)
		}
	}

	// A FIFO the run itself makes under an output's name, in a scope of
	// its own: the Result comes back before the deadline.
	c = tg.catalog(t, `timeout = "20s"`)
	res = execBounded(t, handle(t, c, provider.Identity{}), provider.Request{Lang: provider.LangSh,
		Code: "mkfifo out && echo made", OutputFiles: []string{"out"}, Timeout: 20 * time.Second})
	want(t, res, provider.StatusSucceeded)
	if res.FileErrors["out"] == "" || len(res.OutputFiles) != 0 {
		t.Errorf("a FIFO as output: files %q, errors %v", res.OutputFiles, res.FileErrors)
	}
}

// detachedWork: a call of a kept scope leaves a detached worker that
// keeps writing a file, started with the command line "sleep 3600" (a
// name a provider might spare). The next call of the scope sees the
// file no longer growing: no call's work outlives its call.
func detachedWork(t *testing.T, tg Target) {
	c := tg.catalog(t, `scope = "session"`+"\ntimeout = \"30s\"")
	h := handle(t, c, provider.Identity{User: "u", Session: "detached"})
	res := exec(t, h, provider.Request{Lang: provider.LangSh, Code: `
printf 'import time\nwhile True:\n    open("beat", "a").write("x"); time.sleep(0.1)\n' > 3600
python3 -c '
import os, sys
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, ["sleep", "3600"])
    os._exit(0)
'
sleep 1; wc -c < beat`})
	var n int
	fmt.Sscan(res.Stdout, &n)
	if n == 0 {
		t.Fatalf("control: the detached worker did not write during its call: %q %q", res.Stdout, res.Stderr)
	}
	res = exec(t, h, sh(`a=$(wc -c < beat); sleep 1; b=$(wc -c < beat); echo "$a $b"`))
	var a, b int
	if _, err := fmt.Sscan(res.Stdout, &a, &b); err != nil {
		t.Fatalf("second call: %q %q", res.Stdout, res.Stderr)
	}
	if a != b {
		t.Errorf("the worker of the previous call still writes: %d → %d bytes over a second", a, b)
	}
}
