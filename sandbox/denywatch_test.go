package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// withWorkspaceDeny adds the deny globs an agent's profile typically has.
func withWorkspaceDeny(s *profile.Spec) {
	s.Filesystem.Deny = append(s.Filesystem.Deny, "**/.env", "**/*.pem", "secrets")
}

// TestDenyWatchRealTools: with deny globs watched, git, go build and a
// FIFO work in the workspace as they do without (the supervisor's look at
// each open must not block on, or stand in for, a FIFO's other end), and
// nothing they need is refused.
func TestDenyWatchRealTools(t *testing.T) {
	if _, err := os.Stat("/usr/local/go/bin/go"); err != nil {
		t.Skip("no Go toolchain at /usr/local/go to run inside the sandbox")
	}
	ex, ws := newExecutor(t, withWorkspaceDeny)
	if st := ex.Report().Status(profile.DenyNewFiles); st.Status == sandbox.NotApplied {
		t.Fatalf("deny-new-files not applied: %+v", st)
	}
	files := map[string]string{
		"go.mod":          "module hello\n\ngo 1.22\n",
		"main.go":         "package main\n\nfunc main() { println(\"built under a deny watch\") }\n",
		".env":            "TOKEN=present-at-start\n", // masked at start
		"internal/x/x.go": "package x\n",
	}
	for name, content := range files {
		path := filepath.Join(ws, name)
		must(t, os.MkdirAll(filepath.Dir(path), 0o755))
		must(t, os.WriteFile(path, []byte(content), 0o644))
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "go.mod", "main.go"}, {"-c", "user.email=a@b.c", "-c", "user.name=a", "commit", "-qm", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", ws}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	res, err := ex.Run(context.Background(), sandbox.Cmd{
		Args: []string{"sh", "-c", `git status --porcelain && /usr/local/go/bin/go build -o hello . && /usr/local/go/bin/go vet ./... && ./hello &&
mkfifo fifo && { echo through-the-fifo > fifo & } && cat fifo`},
		Env:     []string{"GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "CGO_ENABLED=0"},
		Timeout: 5 * time.Minute,
	})
	if err != nil || res.Status != sandbox.StatusSucceeded {
		t.Fatalf("git status, go build: %v %+v\nstdout %s\nstderr %s", err, res, res.Stdout, res.Stderr)
	}
	if !strings.Contains(string(res.Stdout), "?? .env") || !strings.Contains(string(res.Stderr), "built under a deny watch") || !strings.Contains(string(res.Stdout), "through-the-fifo") {
		t.Errorf("git status should list .env untracked, the binary should run, the FIFO carry a line\nstdout %s\nstderr %s", res.Stdout, res.Stderr)
	}
	for _, d := range res.Denials {
		t.Errorf("unexpected denial %+v", d)
	}
}

// TestDenyWatchEndsWithTheRun: a run killed, timed out or failing its
// setup while the command opens watched files never hangs, and its
// fanotify group is closed when Wait (or the failed Start) returns.
func TestDenyWatchEndsWithTheRun(t *testing.T) {
	ex, ws := newExecutor(t, withWorkspaceDeny)
	if st := ex.Report().Status(profile.DenyNewFiles); !strings.HasPrefix(st.Mechanism, "fanotify") {
		t.Skipf("no deny watch on this host: %+v", st)
	}
	fatalIf(t, os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n"), 0o644))
	before := fanotifyGroups(t)
	// Both answers, from several processes at once: .env (created by
	// the loop, not there at start) refused, main.go allowed.
	loop := `while :; do echo x > .env; cat .env main.go; done >/dev/null 2>&1`
	busy := sandbox.Cmd{Args: []string{"sh", "-c", loop + " & " + loop + " & " + loop}}

	finish := func(t *testing.T, proc *sandbox.Process) *sandbox.Result {
		t.Helper()
		done := make(chan *sandbox.Result, 1)
		go func() {
			res, err := proc.Wait()
			if err != nil {
				t.Errorf("wait: %v", err)
			}
			done <- res
		}()
		select {
		case res := <-done:
			return res
		case <-time.After(30 * time.Second):
			t.Fatal("Wait did not return within 30s of the end of the run")
			return nil
		}
	}
	t.Run("kill", func(t *testing.T) {
		proc, err := ex.Prepare(context.Background(), busy)
		fatalIf(t, err)
		fatalIf(t, proc.Start())
		time.Sleep(300 * time.Millisecond)
		fatalIf(t, proc.Kill())
		if res := finish(t, proc); res != nil && res.Status != sandbox.StatusCancelled {
			t.Errorf("status %s, want cancelled", res.Status)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		// The killed run left .env; present at start, a mask would hide it.
		fatalIf(t, os.Remove(filepath.Join(ws, ".env")))
		cmd := busy
		cmd.Timeout = 300 * time.Millisecond
		proc, err := ex.Prepare(context.Background(), cmd)
		fatalIf(t, err)
		fatalIf(t, proc.Start())
		res := finish(t, proc)
		if res != nil && res.Status != sandbox.StatusTimedOut {
			t.Errorf("status %s, want timed_out", res.Status)
		}
		if res != nil && !refusedOpen(res, filepath.Join(ws, ".env")) {
			t.Errorf("no denial of .env in %+v", res.Denials)
		}
	})
	t.Run("setup-fails-after-hand-off", func(t *testing.T) {
		// "find command" comes after the deny watch step.
		_, err := ex.Run(context.Background(), sandbox.Cmd{Args: []string{"/nonexistent/airlock-test"}})
		var se *sandbox.SetupError
		if !errors.As(err, &se) || se.Step != "find command" {
			t.Fatalf("err = %v; want a SetupError of step find command", err)
		}
	})
	// The close completes in the background (the kernel's grace period
	// for dropping marks), shortly after Wait returns.
	deadline := time.Now().Add(5 * time.Second)
	for fanotifyGroups(t) != before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if after := fanotifyGroups(t); after != before {
		t.Errorf("%d fanotify groups open 5s after the runs, %d before: a run left its group open", after, before)
	}
}

// refusedOpen reports whether the Result lists a filesystem denial of path.
func refusedOpen(res *sandbox.Result, path string) bool {
	for _, d := range res.Denials {
		if d.Kind == "filesystem" && d.Target == path {
			return true
		}
	}
	return false
}

// fanotifyGroups counts this process's fanotify descriptors.
func fanotifyGroups(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	fatalIf(t, err)
	n := 0
	for _, e := range ents {
		if l, _ := os.Readlink("/proc/self/fd/" + e.Name()); l == "anon_inode:[fanotify]" {
			n++
		}
	}
	return n
}

// TestDenyWatchManyMounts: a workspace with more directory mounts than
// one hand-off message carries (each submodule's hooks directory is a
// protected path, so a mount of its own) has all of them watched.
func TestDenyWatchManyMounts(t *testing.T) {
	ex, ws := newExecutor(t, withWorkspaceDeny)
	if st := ex.Report().Status(profile.DenyNewFiles); !strings.HasPrefix(st.Mechanism, "fanotify") {
		t.Skipf("no deny watch on this host: %+v", st)
	}
	const n = 300
	for i := range n {
		fatalIf(t, os.MkdirAll(filepath.Join(ws, fmt.Sprintf(".git/modules/m%03d/hooks", i)), 0o755))
	}
	proc, err := ex.Prepare(context.Background(), sandbox.Cmd{Args: []string{"sh", "-c", `while [ ! -e go ]; do sleep 0.01; done; for d in .git/modules/*/hooks; do cat $d/.env; done 2>/dev/null; grep -c ' .*/hooks ' /proc/self/mountinfo`}, Timeout: time.Minute})
	fatalIf(t, err)
	fatalIf(t, proc.Start())
	for i := range n {
		fatalIf(t, os.WriteFile(filepath.Join(ws, fmt.Sprintf(".git/modules/m%03d/hooks/.env", i)), []byte("LATE-SECRET\n"), 0o644))
	}
	fatalIf(t, os.WriteFile(filepath.Join(ws, "go"), nil, 0o644))
	res, err := proc.Wait()
	fatalIf(t, err)
	mounts, err := strconv.Atoi(strings.TrimSpace(string(res.Stdout)))
	if err != nil || mounts < n {
		t.Errorf("want no secret and at least %d hooks mounts in the view; stdout %q stderr %q", n, res.Stdout, res.Stderr)
	}
	for _, i := range []int{0, n / 2, n - 1} {
		if path := filepath.Join(ws, fmt.Sprintf(".git/modules/m%03d/hooks/.env", i)); !refusedOpen(res, path) {
			t.Errorf("no denial of %s", path)
		}
	}
}

// BenchmarkDenyWatch measures what the deny watch costs, for three
// profiles: no deny entries (no watch), the preset (its /etc entries, so
// /etc is watched, read-only) and the preset plus workspace globs (the
// workspace is watched too). For each, "true" is Prepare, Start and Wait
// of /bin/true (setup-ns/op: Start → exec); "open" is one run of a Python
// loop that opens workspace files 4000 times and lists a workspace
// directory 1000 times (ns/open and ns/listdir, timed inside the
// sandbox); "gobuild" is go build of a small module with a warm build
// cache in the workspace.
//
//	go test -run '^$' -bench DenyWatch -benchtime 20x ./sandbox/
func BenchmarkDenyWatch(b *testing.B) {
	for _, prof := range []struct {
		name string
		edit func(*profile.Spec)
	}{
		{"no-deny", func(s *profile.Spec) { s.Filesystem.Deny = nil }},
		{"preset", func(*profile.Spec) {}},
		{"preset+workspace-globs", withWorkspaceDeny},
	} {
		ws := b.TempDir()
		s := profile.Preset(profile.DefaultPreset)
		s.Workspace = ws
		prof.edit(&s)
		p, err := profile.New(s)
		if err != nil {
			b.Fatal(err)
		}
		ex, err := sandbox.New(p)
		if err != nil {
			b.Skip(err)
		}
		b.Cleanup(func() { ex.Close() })
		b.Logf("%s: deny-new-files %s", prof.name, ex.Report().Status(profile.DenyNewFiles).Status)
		run := func(b *testing.B, cmd sandbox.Cmd) *sandbox.Result {
			res, err := ex.Run(context.Background(), cmd)
			if err != nil || res.Status != sandbox.StatusSucceeded {
				b.Fatalf("%v %+v\nstderr %s", err, res, res.Stderr)
			}
			return res
		}

		b.Run(prof.name+"/true", func(b *testing.B) {
			var setup time.Duration
			for b.Loop() {
				setup += run(b, sandbox.Cmd{Args: []string{"/bin/true"}}).Timings.Setup
			}
			b.ReportMetric(float64(setup.Nanoseconds())/float64(b.N), "setup-ns/op")
		})

		b.Run(prof.name+"/open", func(b *testing.B) {
			dir := filepath.Join(ws, "files")
			fatalIf(b, os.MkdirAll(dir, 0o755))
			for i := range 200 {
				fatalIf(b, os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), []byte("x"), 0o644))
			}
			const src = `
import os, time
paths = [os.path.join("files", str(i)) for i in range(200)]
t = time.perf_counter_ns()
for _ in range(20):
    for p in paths:
        os.close(os.open(p, os.O_RDONLY))
o = (time.perf_counter_ns() - t) / 4000
t = time.perf_counter_ns()
for _ in range(1000):
    os.listdir("files")
print(o, (time.perf_counter_ns() - t) / 1000)
`
			var open, list float64
			for b.Loop() {
				res := run(b, sandbox.Cmd{Args: []string{"/usr/bin/python3", "-c", src}})
				f := strings.Fields(string(res.Stdout))
				if len(f) != 2 {
					b.Fatalf("python printed %q", res.Stdout)
				}
				o, _ := strconv.ParseFloat(f[0], 64)
				l, _ := strconv.ParseFloat(f[1], 64)
				open, list = open+o, list+l
			}
			b.ReportMetric(open/float64(b.N), "ns/open")
			b.ReportMetric(list/float64(b.N), "ns/listdir")
		})

		b.Run(prof.name+"/gobuild", func(b *testing.B) {
			if _, err := os.Stat("/usr/local/go/bin/go"); err != nil {
				b.Skip("no Go toolchain at /usr/local/go")
			}
			fatalIf(b, os.WriteFile(filepath.Join(ws, "go.mod"), []byte("module hello\n\ngo 1.22\n"), 0o644))
			fatalIf(b, os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(1) }\n"), 0o644))
			cmd := sandbox.Cmd{
				Args:    []string{"/usr/local/go/bin/go", "build", "-o", "hello", "."},
				Env:     []string{"GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "CGO_ENABLED=0", "GOCACHE=" + filepath.Join(ws, ".gocache")},
				Timeout: 5 * time.Minute,
			}
			run(b, cmd) // warm the cache
			for b.Loop() {
				run(b, cmd)
			}
		})
	}
}

func fatalIf(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
