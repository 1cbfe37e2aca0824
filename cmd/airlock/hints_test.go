package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hintUser is one way of running the built CLI: as root, or as uid
// 65534 with a workspace it owns.
type hintUser struct {
	name string
	ws   func(t *testing.T) string
	argv func(args ...string) []string
}

func hintUsers(t *testing.T, bin string) []hintUser {
	users := []hintUser{{"root", func(t *testing.T) string { return t.TempDir() }, func(args ...string) []string { return append([]string{bin}, args...) }}}
	if os.Geteuid() == 0 {
		uws, argv := unprivilegedCommand(t, bin)
		users = append(users, hintUser{"uid 65534", func(t *testing.T) string {
			// A fresh directory in the user's workspace per case.
			d, err := os.MkdirTemp(uws, "case-")
			if err != nil {
				t.Fatal(err)
			}
			os.Chmod(d, 0o755)
			os.Chown(d, 65534, 65534)
			return d
		}, func(args ...string) []string { return append([]string{"setpriv"}, argv(args...)...) }})
	}
	return users
}

// asUser runs an argv in dir, as the user it was made for.
func asUser(t *testing.T, u hintUser, dir string, args ...string) (int, string, string) {
	t.Helper()
	argv := u.argv(args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	if u.name != "root" {
		// git as uid 65534 in a repository it owns.
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
	}
	return runCmd(t, cmd)
}

// TestRunRefusalHints: each refusal the sandbox makes by design without
// an event of its own gets one airlock line naming the cause and the
// fix, as written, and a record in the Report: git config on the
// protected .git/config, a Go program's connect with the network off, a
// script on the host's /tmp, and git worktree add outside the workspace
// (refused before it runs, so no stale entry reaches the host's
// repository). As root and uid 65534.
func TestRunRefusalHints(t *testing.T) {
	for _, tool := range []string{"git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	bin := buildAirlock(t)
	// A Go program that dials an address: with --net none, only lo.
	dialer := filepath.Join(t.TempDir(), "main.go")
	os.WriteFile(dialer, []byte("package main\nimport (\"fmt\"; \"net\"; \"os\")\nfunc main() { _, err := net.Dial(\"tcp\", \"192.0.2.1:80\"); fmt.Fprintln(os.Stderr, err); os.Exit(1) }\n"), 0o644)
	dial := filepath.Join(os.TempDir(), "airlock-hint-dial")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", dial, dialer)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v %s", err, out)
	}
	t.Cleanup(func() { os.Remove(dial) })
	script, err := os.CreateTemp("/tmp", "airlock-hint-*.sh")
	if err != nil {
		t.Fatal(err)
	}
	script.WriteString("echo from-the-host-tmp\n")
	script.Close()
	os.Chmod(script.Name(), 0o755)
	t.Cleanup(func() { os.Remove(script.Name()) })

	for _, u := range hintUsers(t, bin) {
		t.Run(u.name, func(t *testing.T) {
			gitRepo := func(t *testing.T) string {
				ws := u.ws(t)
				for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "x"}} {
					cmd := exec.Command("git", args...)
					cmd.Dir = ws
					cmd.Env = append(os.Environ(), "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=safe.directory", "GIT_CONFIG_VALUE_0=*")
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Fatalf("git %v: %v %s", args, err, out)
					}
				}
				if u.name != "root" {
					exec.Command("chown", "-R", "65534:65534", ws).Run()
				}
				return ws
			}
			t.Run("git config", func(t *testing.T) {
				ws := gitRepo(t)
				code, out, errOut := asUser(t, u, ws, "run", "--workspace", ws, "--report", "-", "--", "git", "config", "user.name", "Bob")
				if code == 0 || !strings.Contains(errOut, "\nairlock: .git/config is read-only in the sandbox (agent persistence); run git config on the host\n") {
					t.Errorf("exit %d, stderr %q", code, errOut)
				}
				if !strings.Contains(out, `"target": ".git/config"`) {
					t.Errorf("the Report has no .git/config record:\n%.2000s", out)
				}
			})
			t.Run("network unreachable", func(t *testing.T) {
				ws := u.ws(t)
				_, out, errOut := asUser(t, u, ws, "run", "--workspace", ws, "--allow-read", dial, "--report", "-", "--", dial)
				if !strings.Contains(errOut, "connect: network is unreachable\nairlock: a connection failed: the network is off in this sandbox (--net none); allow the hosts the command needs with --net HOST,...\n") {
					t.Errorf("stderr %q", errOut)
				}
				if !strings.Contains(out, "network is unreachable") {
					t.Errorf("the Report has no record:\n%.2000s", out)
				}
			})
			t.Run("host tmp", func(t *testing.T) {
				ws := u.ws(t)
				want := "airlock: filesystem: the sandbox's /tmp is private: this file is on the host's /tmp only; put it in the workspace, or pass --allow-read " + script.Name() + " (" + script.Name() + ")\n"
				for _, argv := range [][]string{{"sh", script.Name()}, {script.Name()}} {
					code, _, errOut := asUser(t, u, ws, append([]string{"run", "--workspace", ws, "--"}, argv...)...)
					if code == 0 || !strings.Contains(errOut, want) {
						t.Errorf("%v: exit %d, stderr %q", argv, code, errOut)
					}
				}
				// The fix the line names works.
				code, out, errOut := asUser(t, u, ws, "run", "--workspace", ws, "--allow-read", script.Name(), "--", "sh", script.Name())
				if code != 0 || out != "from-the-host-tmp\n" || strings.Contains(errOut, "private") {
					t.Errorf("with --allow-read: exit %d, %q %q", code, out, errOut)
				}
			})
			t.Run("git worktree", func(t *testing.T) {
				ws := gitRepo(t)
				// The control: on the host, the same command adds an entry.
				ctl := gitRepo(t)
				if out, err := exec.Command("git", "-c", "safe.directory=*", "-C", ctl, "worktree", "add", "-q", "../ctl-wt").CombinedOutput(); err != nil {
					t.Fatalf("control: %v %s", err, out)
				}
				t.Cleanup(func() { os.RemoveAll(filepath.Join(filepath.Dir(ctl), "ctl-wt")) })
				if _, err := os.Stat(filepath.Join(ctl, ".git", "worktrees")); err != nil {
					t.Fatalf("control: git worktree add made no entry: %v", err)
				}
				code, _, errOut := asUser(t, u, ws, "run", "--workspace", ws, "--", "git", "worktree", "add", "../wt")
				want := "airlock: git worktree add ../wt: " + filepath.Join(filepath.Dir(ws), "wt") + " is outside the workspace, so the worktree would be made in the sandbox's private view and vanish with the run, leaving a stale entry in .git/worktrees; run git worktree add on the host, or give a path inside the workspace\n"
				if code != exitSetup || errOut != want {
					t.Errorf("exit %d, stderr %q; want %d, %q", code, errOut, exitSetup, want)
				}
				if _, err := os.Stat(filepath.Join(ws, ".git", "worktrees")); err == nil {
					t.Errorf("a worktree entry reached the host's repository")
				}
				// Inside the workspace, the create guard refuses the new
				// worktree's .git with a line of its own.
				if code, _, errOut := asUser(t, u, ws, "run", "--workspace", ws, "--", "git", "worktree", "add", "-q", "inside"); code == 0 || !strings.Contains(errOut, "(inside/.git)") {
					t.Errorf("git worktree add inside the workspace: exit %d %q", code, errOut)
				}
			})
		})
	}
}

// TestRunBudgetUsageErrors: budgets a run could not use are usage errors that
// name the fix, before anything runs.
func TestRunBudgetUsageErrors(t *testing.T) {
	bin := buildAirlock(t)
	ws := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--cpu", "0.001"}, "airlock: --cpu 0.001: below the kernel's smallest CPU budget, 0.01 cores (1 ms per 100 ms); use 0.01 or more, or leave --cpu out for none\n"},
		{[]string{"--pids", "1"}, "airlock: --pids 1: the command itself is the one process, so it could start no other (a shell, git, make and compilers all do, and fail with \"Resource temporarily unavailable\"); use 2 or more, 64 for a build\n"},
		{[]string{"--workspace", ""}, "airlock: --workspace '': an empty path; name the project directory (--workspace .), or leave --workspace out to use the nearest one with .git or .airlock/\n"},
		{[]string{"--max-output", "0"}, "airlock: --max-output 0: the command could print nothing at all; use a positive size such as 1MiB, or leave --max-output out for the profile's budget\n"},
		{[]string{"--publish", "0"}, "airlock run: --publish 0: want [[ADDR:]HOST_PORT:]PORT with ports from 1 to 65535 and ADDR an IP address, as in --publish 8000, --publish 18000:8000 or --publish 0.0.0.0:18000:8000\n"},
		{[]string{"--tty=maybe"}, "airlock run: --tty maybe: want auto, always or never (--tty alone is always, --no-tty never)\n"},
	} {
		cmd := exec.Command(bin, append(append([]string{"run"}, c.args...), "--", "true")...)
		cmd.Dir = ws
		code, _, errOut := runCmd(t, cmd)
		if code != exitSetup || errOut != c.want {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", c.args, code, errOut, exitSetup, c.want)
		}
	}
	// The control: a CPU budget the kernel takes runs.
	cmd := exec.Command(bin, "run", "--cpu", "0.01", "--", "true")
	cmd.Dir = ws
	if code, _, errOut := runCmd(t, cmd); code != 0 {
		t.Errorf("--cpu 0.01: exit %d %q", code, errOut)
	}
}

// TestEscapedNames: a name with terminal escapes (here a directory
// whose name retitles the terminal) reaches airlock's own lines escaped,
// never raw: mcp serve's listening line, its setup errors and run's.
func TestEscapedNames(t *testing.T) {
	bin := buildAirlock(t)
	base := t.TempDir()
	ws := filepath.Join(base, "ws\x1b]0;pwned\x07")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(base, "gone\x1b]0;pwned\x07")
	for _, args := range [][]string{
		{"mcp", "serve", "--http", "127.0.0.1:0", "--token-file", filepath.Join(base, "token"), "--workspace", ws},
		{"mcp", "serve", "--workspace", missing},
		{"run", "--workspace", missing, "--", "true"},
		{"run", "--workspace", ws, "--", "sh", "-c", "exit 3"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = base
		out, _ := cmd.CombinedOutput()
		cancel()
		if strings.ContainsRune(string(out), '\x1b') || strings.ContainsRune(string(out), '\a') {
			t.Errorf("%v: a raw escape on airlock's output: %q", args, out)
		}
		if args[1] == "serve" && args[2] == "--http" && !strings.Contains(string(out), `ws\x1b]0;pwned\a`) {
			t.Errorf("%v: the listening line does not name the workspace, escaped: %q", args, out)
		}
	}
}
