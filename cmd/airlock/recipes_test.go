package main

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/testnet"
)

// The tests of docs/RECIPES.md: each runs its recipe's flags for real and
// checks the result on the host.

// recipeRun runs the built CLI with HOME set to home (the recipes name
// paths under it) from dir, the workspace.
func recipeRun(t *testing.T, bin, home, dir string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"run", "--workspace", dir}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+home)
	return runCmd(t, cmd)
}

func recipeDirs(t *testing.T) (home, ws string) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, ws = filepath.Join(root, "home"), filepath.Join(root, "home", "proj")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	return home, ws
}

func TestRecipeGitIdentity(t *testing.T) {
	bin := buildAirlock(t)
	home, ws := recipeDirs(t)
	id := []string{"--env", "GIT_AUTHOR_NAME=Ada Lovelace", "--env", "GIT_AUTHOR_EMAIL=ada@example.com",
		"--env", "GIT_COMMITTER_NAME=Ada Lovelace", "--env", "GIT_COMMITTER_EMAIL=ada@example.com"}
	// The repository is made on the host: the sandbox cannot create a
	// .git at the top of a workspace that has none (docs/PROFILES.md).
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		t.Fatalf("git init on the host: %v: %s", err, out)
	}
	script := "git commit -q --allow-empty -m recipe"
	// Control: without the identity git refuses to commit (HOME is empty).
	if code, _, _ := recipeRun(t, bin, home, ws, "--", "sh", "-c", script); code == 0 {
		t.Fatal("control: git committed without an identity; the recipe proves nothing")
	}
	code, _, errOut := recipeRun(t, bin, home, ws, append(id, "--", "sh", "-c", script)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	out, err := exec.Command("git", "-C", ws, "log", "--format=%an <%ae> / %cn").Output()
	if err != nil || strings.TrimSpace(string(out)) != "Ada Lovelace <ada@example.com> / Ada Lovelace" {
		t.Fatalf("host sees the commit as %q (%v)", out, err)
	}
}

func TestRecipeCaches(t *testing.T) {
	bin := buildAirlock(t)
	home, ws := recipeDirs(t)
	if goBin, err := exec.LookPath("go"); err == nil {
		writeFile(t, filepath.Join(ws, "go.mod"), "module example.com/recipe\n\ngo 1.21\n")
		writeFile(t, filepath.Join(ws, "main.go"), "package main\n\nfunc main() { println(\"built\") }\n")
		code, _, errOut := recipeRun(t, bin, home, ws, "--env", "GOCACHE="+ws+"/.cache/go-build",
			"--env", "GOMODCACHE="+ws+"/.cache/go-mod", "--env", "GOTOOLCHAIN=local", "--", goBin, "build", "-o", "app", ".")
		if code != 0 {
			t.Fatalf("go build: exit %d: %s", code, errOut)
		}
		if entries, _ := os.ReadDir(filepath.Join(ws, ".cache/go-build")); len(entries) == 0 {
			t.Error("the workspace's Go build cache is empty on the host")
		}
		// A named cache directory under HOME, shared by sandboxed runs.
		shared := filepath.Join(home, ".cache/airlock-go")
		if err := os.MkdirAll(shared, 0o755); err != nil {
			t.Fatal(err)
		}
		code, _, errOut = recipeRun(t, bin, home, ws, "--allow-write", shared, "--env", "GOCACHE="+shared,
			"--env", "GOTOOLCHAIN=local", "--", goBin, "build", "-o", "app", ".")
		if entries, _ := os.ReadDir(shared); code != 0 || len(entries) == 0 {
			t.Errorf("named cache: exit %d, %d entries on the host: %s", code, len(entries), errOut)
		}
	}
	if _, err := exec.LookPath("npm"); err == nil {
		code, out, errOut := recipeRun(t, bin, home, ws, "--env", "npm_config_cache="+ws+"/.cache/npm", "--", "npm", "config", "get", "cache")
		if code != 0 || strings.TrimSpace(out) != ws+"/.cache/npm" {
			t.Errorf("npm cache: exit %d, %q, %s", code, out, errOut)
		}
	}
	code, out, errOut := recipeRun(t, bin, home, ws, "--env", "PIP_CACHE_DIR="+ws+"/.cache/pip", "--", "python3", "-m", "pip", "cache", "dir")
	if code != 0 || strings.TrimSpace(out) != ws+"/.cache/pip" {
		t.Errorf("pip cache: exit %d, %q, %s", code, out, errOut)
	}
}

func TestRecipeVenv(t *testing.T) {
	bin := buildAirlock(t)
	home, ws := recipeDirs(t)
	if code, _, errOut := recipeRun(t, bin, home, ws, "--", "python3", "-m", "venv", ".venv"); code != 0 {
		t.Fatalf("venv: exit %d: %s", code, errOut)
	}
	code, out, errOut := recipeRun(t, bin, home, ws, "--", ".venv/bin/python", "-c", "import sys; print(sys.prefix)")
	if code != 0 || strings.TrimSpace(out) != filepath.Join(ws, ".venv") {
		t.Fatalf("venv python: exit %d, prefix %q: %s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(ws, ".venv/pyvenv.cfg")); err != nil {
		t.Fatalf("the venv is not in the workspace on the host: %v", err)
	}
}

// demoWheel is a one-module wheel, airlock-demo 1.0.
func demoWheel(t *testing.T) []byte {
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	files := map[string]string{
		"airlock_demo/__init__.py":                 "VALUE = 42\n",
		"airlock_demo-1.0.dist-info/METADATA":      "Metadata-Version: 2.1\nName: airlock-demo\nVersion: 1.0\n",
		"airlock_demo-1.0.dist-info/WHEEL":         "Wheel-Version: 1.0\nGenerator: airlock-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
		"airlock_demo-1.0.dist-info/RECORD":        "airlock_demo/__init__.py,,\nairlock_demo-1.0.dist-info/METADATA,,\nairlock_demo-1.0.dist-info/WHEEL,,\nairlock_demo-1.0.dist-info/RECORD,,\n",
		"airlock_demo-1.0.dist-info/top_level.txt": "airlock_demo\n",
	}
	for name, body := range files {
		w, err := z.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, body)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRecipeRegistry(t *testing.T) {
	testnet.Require(t)
	h := testnet.NewHost(t, "10.213.21.0/24", "fd00:a1:21::/64")
	wheel := demoWheel(t)
	var requests strings.Builder
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(&requests, r.URL.Path)
		switch r.URL.Path {
		case "/simple/airlock-demo/":
			io.WriteString(w, `<html><body><a href="/files/airlock_demo-1.0-py3-none-any.whl">airlock_demo-1.0-py3-none-any.whl</a></body></html>`)
		case "/files/airlock_demo-1.0-py3-none-any.whl":
			w.Write(wheel)
		default:
			http.NotFound(w, r)
		}
	})}
	go srv.Serve(h.ListenTCP(t, "", 8080))
	t.Cleanup(func() { srv.Close() })
	bin := buildAirlock(t)
	home, ws := recipeDirs(t)
	if code, _, errOut := recipeRun(t, bin, home, ws, "--", "python3", "-m", "venv", ".venv"); code != 0 {
		t.Fatalf("venv: exit %d: %s", code, errOut)
	}
	index := net.JoinHostPort(h.Addr4.String(), "8080")
	install := []string{"--", ".venv/bin/pip", "install", "--no-cache-dir", "--disable-pip-version-check",
		"--retries", "0", "--timeout", "5", "--trusted-host", h.Addr4.String(), "--index-url", "http://" + index + "/simple/", "airlock-demo"}
	// Control: without --net the index is unreachable.
	if code, _, _ := recipeRun(t, bin, home, ws, install...); code == 0 {
		t.Fatal("control: pip installed without --net")
	}
	code, _, errOut := recipeRun(t, bin, home, ws, append([]string{"--net", index}, install...)...)
	if code != 0 {
		t.Fatalf("pip install with --net %s: exit %d: %s\nrequests:\n%s", index, code, errOut, requests.String())
	}
	code, out, errOut := recipeRun(t, bin, home, ws, "--", ".venv/bin/python", "-c", "import airlock_demo; print(airlock_demo.VALUE)")
	if code != 0 || strings.TrimSpace(out) != "42" {
		t.Fatalf("installed package: exit %d %q %s", code, out, errOut)
	}
}

func TestRecipeSSH(t *testing.T) {
	testnet.Require(t)
	testnet.RequireTools(t, "ssh", "ssh-keygen")
	h := testnet.NewHost(t, "10.213.22.0/24", "fd00:a1:22::/64")
	ln := h.ListenTCP(t, "", 22)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.WriteString(c, "SSH-2.0-airlock-test\r\n")
				buf := make([]byte, 256)
				c.Read(buf)
			}()
		}
	}()
	bin := buildAirlock(t)
	home, ws := recipeDirs(t)
	sshDir := filepath.Join(home, ".ssh")
	if err := os.MkdirAll(sshDir, 0o700); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(sshDir, "airlock_deploy_key")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	known := filepath.Join(sshDir, "known_hosts")
	writeFile(t, known, "")
	host := h.Addr4.String()
	sshCmd := "ssh -v -i " + key + " -o IdentitiesOnly=yes -o UserKnownHostsFile=" + known + " -o BatchMode=yes"
	args := []string{"--allow-read", key, "--allow-read", known, "--env", "GIT_SSH_COMMAND=" + sshCmd,
		"--", "git", "ls-remote", "git@" + host + ":repo.git"}
	// Control: without --net HOST:22 the remote is unreachable.
	_, _, errOut := recipeRun(t, bin, home, ws, args...)
	if strings.Contains(errOut, "remote software version airlock-test") {
		t.Fatal("control: ssh reached the remote without --net")
	}
	_, _, errOut = recipeRun(t, bin, home, ws, append([]string{"--net", host + ":22"}, args...)...)
	for _, want := range []string{"remote software version airlock-test", "identity file " + key + " type"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("ssh output lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "identity file "+key+" type -1") {
		t.Errorf("ssh could not read the key in the sandbox:\n%s", errOut)
	}
}
