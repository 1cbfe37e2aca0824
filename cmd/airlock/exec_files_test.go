package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// execResult is the part of a printed Result these tests read.
type execResult struct {
	Status      string            `json:"status"`
	ExitCode    int               `json:"exit_code"`
	Stdout      string            `json:"stdout"`
	OutputFiles map[string][]byte `json:"output_files"`
	FileErrors  map[string]string `json:"file_errors"`
	Metadata    map[string]string `json:"metadata"`
}

// bounded runs f and fails the test when it has not returned within
// limit: the deadline of a run that a file can hold up never comes.
func bounded[T any](t *testing.T, limit time.Duration, what string, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(limit):
		t.Fatalf("%s did not return within %s", what, limit)
		var zero T
		return zero
	}
}

// TestExecOutputFifo: a run that leaves a FIFO under an --output name
// gets its Result back, the FIFO refused in it, before its deadline;
// today's airlock blocked on the FIFO past the deadline and SIGTERM. As
// uid 65534 too: there the local provider either does the same or
// refuses to run at all with one line naming the guarantee it lacks.
func TestExecOutputFifo(t *testing.T) {
	bin := buildAirlock(t)
	for _, unpriv := range []bool{false, true} {
		t.Run(map[bool]string{false: "caller", true: "uid 65534"}[unpriv], func(t *testing.T) {
			if unpriv {
				if os.Geteuid() != 0 {
					t.Skip("needs root to switch to uid 65534")
				}
				if _, err := exec.LookPath("setpriv"); err != nil {
					t.Skip("needs setpriv (util-linux)")
				}
			}
			dir := t.TempDir()
			for _, p := range []string{filepath.Dir(dir), dir, filepath.Dir(filepath.Dir(bin)), filepath.Dir(bin)} {
				if err := os.Chmod(p, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			cat := filepath.Join(dir, "sandboxes.toml")
			if err := os.WriteFile(cat, []byte("[sandbox.sh]\nprovider = \"local\"\ntimeout = \"20s\"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{bin, "exec", "--config", cat, "--sandbox", "sh", "--lang", "sh",
				"--code", "mkfifo out && echo fine > plain", "--output", "out", "--output", "plain"}
			if unpriv {
				args = append([]string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}, args...)
			}
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Dir = dir
			if unpriv {
				cmd.Env = []string{"HOME=" + dir, "PATH=/usr/bin:/bin"}
			}
			var so, se strings.Builder
			cmd.Stdout, cmd.Stderr = &so, &se
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if cmd.ProcessState == nil {
					cmd.Process.Kill()
					cmd.Wait()
				}
			})
			err := bounded(t, 50*time.Second, "airlock exec with a FIFO as --output", cmd.Wait)
			if unpriv && cmd.ProcessState.ExitCode() == 1 {
				if !strings.Contains(se.String(), "sandbox unavailable") || strings.Count(se.String(), "\n") != 1 {
					t.Errorf("refusal as uid 65534 is not one line saying what is missing: %q", se.String())
				}
				t.Logf("as uid 65534: %s", se.String())
				return
			}
			if err != nil {
				t.Fatalf("exit: %v; stderr %q", err, se.String())
			}
			var r execResult
			if err := json.Unmarshal([]byte(so.String()), &r); err != nil {
				t.Fatalf("stdout is not a Result: %v\n%s", err, so.String())
			}
			if r.Status != "succeeded" || string(r.OutputFiles["plain"]) != "fine\n" || !strings.Contains(r.FileErrors["out"], "FIFO") {
				t.Errorf("got %+v", r)
			}
		})
	}
}

// TestServeExecFilesLeftByEarlierCall: through a real 'airlock serve',
// one call of a session scope leaves a FIFO and a link to a host file
// under the names the next call sends as files. The next call returns
// (it used to hang with the scope's slot held), refuses both in
// file_errors, writes nothing through the link (host-side evidence:
// the file's content), the scope then runs the next call, and the
// daemon exits on SIGTERM.
func TestServeExecFilesLeftByEarlierCall(t *testing.T) {
	t.Run("local", func(t *testing.T) { serveExecFilesLeft(t, `provider = "local"`) })
	t.Run("docker", func(t *testing.T) {
		serveExecFilesLeft(t, fmt.Sprintf("provider = \"docker\"\nimage = %q", dockerImage(t, "busybox")))
	})
}

func serveExecFilesLeft(t *testing.T, sandbox string) {
	bin, dir, dsn, token, _, _ := serveSetup(t)
	hostFile := filepath.Join(dir, "host-file")
	if err := os.WriteFile(hostFile, []byte("original"), 0o644); err != nil {
		t.Fatal(err)
	}
	catDir := filepath.Join(dir, "home", ".config", "airlock")
	if err := os.MkdirAll(catDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(catDir, "sandboxes.toml"), []byte(`
[sandbox.sh]
`+sandbox+`
scope = "session"
timeout = "20s"

[agent.a]
sandboxes = ["sh"]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, bin, dir, dsn)
	post := func(body string) (int, execResult) {
		var r execResult
		code := d.call(t, token, "POST", "/v1/exec", body, &r)
		return code, r
	}
	// The agent's token says who runs (agent "a"); a body naming another
	// identity is refused, so only the sandbox and the session are named.
	const who = `"sandbox":"sh","session":"s"`
	code, r := post(`{` + who + `,"lang":"sh","code":"mkfifo data.csv && ln -s ` + hostFile + ` link.csv && echo left"}`)
	if code != 200 || r.Status != "succeeded" || r.Stdout != "left\n" {
		t.Fatalf("call 1: %d %+v", code, r)
	}
	code, r = post(`{` + who + `,"lang":"sh","code":"readlink link.csv; [ -p data.csv ] && echo fifo"}`)
	if r.Stdout != hostFile+"\nfifo\n" {
		t.Fatalf("control: call 1's FIFO and link are not in the scope: %d %+v", code, r)
	}
	type answer struct {
		code int
		r    execResult
	}
	a := bounded(t, 50*time.Second, "/v1/exec with files over a FIFO and a link", func() answer {
		c, r := post(`{` + who + `,"lang":"sh","code":"echo ran","files":{"data.csv":"x","link.csv":"attacker"}}`)
		return answer{c, r}
	})
	if b, _ := os.ReadFile(hostFile); string(b) != "original" {
		t.Errorf("the daemon wrote through the link: the host file holds %q", b)
	}
	if a.code != 200 || a.r.Status != "failed" || a.r.Stdout != "" || a.r.FileErrors["data.csv"] == "" || a.r.FileErrors["link.csv"] == "" {
		t.Errorf("call 2: %d %+v", a.code, a.r)
	}
	code, r = post(`{` + who + `,"lang":"sh","code":"echo next"}`)
	if code != 200 || r.Stdout != "next\n" || r.Metadata["scope_reused"] != "true" {
		t.Errorf("the scope's next call: %d %+v", code, r)
	}
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := bounded(t, 30*time.Second, "airlock serve after SIGTERM", func() error { return <-d.done }); err != nil {
		t.Errorf("exit after SIGTERM: %v", err)
	}
}
