package mcp_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockhq/airlock/audit"
	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// proxyPolicy allows every tool of the server named fs but one, and
// reading files named *.secret (an argument pattern).
const proxyPolicy = `
[[rule]]
effect = "allow"
match  = "mcp__fs"

[[rule]]
effect = "deny"
match  = "mcp__fs__create_directory"
reason = "no new directories through this server"

[[rule]]
effect = "deny"
match  = "mcp__fs__read_text_file(path:*.secret)"
reason = "secrets stay with the user"
`

// fsServer is the pinned @modelcontextprotocol/server-filesystem's entry.
func fsServer(t *testing.T) (script, modules string) {
	t.Helper()
	modules = nodeModules(t)
	return filepath.Join(modules, "@modelcontextprotocol", "server-filesystem", "dist", "index.js"), modules
}

// proxyArgs are airlock's arguments to proxy the filesystem server named fs
// with the workspace's rules only; the server's code is readable in the
// sandbox, as is each of extraRead.
func proxyArgs(ws, modules string, extraRead []string, server ...string) []string {
	args := []string{"mcp", "proxy", "--name", "fs", "--workspace", ws, "--managed", "-", "--user", "-", "--allow-read", modules}
	for _, r := range extraRead {
		args = append(args, "--allow-read", r)
	}
	return append(append(args, "--"), server...)
}

func TestProxyFilesystemServer(t *testing.T) {
	script, modules := fsServer(t)
	ws := workspace(t)
	policy(t, ws, proxyPolicy)
	// The server is told it may also write outside: its own checks pass,
	// and only the sandbox (outside is read-only there) stands in the way.
	outside := sandboxtest.OutsideDir(t)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	args := proxyArgs(ws, modules, []string{outside}, "node", script, ws, outside)
	args = append(args[:2], append([]string{"--audit", log}, args[2:]...)...)
	cs := connectStdio(t, nil, args...)

	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"read_text_file", "write_file", "create_directory", "list_allowed_directories"} {
		if !slices.Contains(names, want) {
			t.Errorf("relayed tools %v lack %s", names, want)
		}
	}

	// Allowed: it passes, and the server's write lands in the workspace.
	inside := filepath.Join(ws, "allowed.txt")
	res := call(t, cs, "write_file", map[string]any{"path": inside, "content": "through the proxy"})
	if res.IsError || readFile(t, inside) != "through the proxy" {
		t.Errorf("allowed write_file: isError=%v %q", res.IsError, text(res))
	}
	res = call(t, cs, "read_text_file", map[string]any{"path": inside})
	if res.IsError || !strings.Contains(text(res), "through the proxy") {
		t.Errorf("allowed read_text_file: isError=%v %q", res.IsError, text(res))
	}

	// Denied: refused with the rule's reason, and the server never saw it.
	dir := filepath.Join(ws, "newdir")
	res = call(t, cs, "create_directory", map[string]any{"path": dir})
	if !res.IsError || !strings.Contains(text(res), "no new directories through this server") || sandboxtest.Exists(dir) {
		t.Errorf("denied create_directory: isError=%v %q exists=%v", res.IsError, text(res), sandboxtest.Exists(dir))
	}

	// An argument pattern: this tool is allowed, but not for this file.
	secret := filepath.Join(ws, "key.secret")
	if err := os.WriteFile(secret, []byte("s3cr3t"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = call(t, cs, "read_text_file", map[string]any{"path": secret})
	if !res.IsError || !strings.Contains(text(res), "secrets stay with the user") || strings.Contains(text(res), "s3cr3t") {
		t.Errorf("read of a *.secret file: isError=%v %q", res.IsError, text(res))
	}

	// Asked to write outside its root, the server tries and the kernel
	// refuses: the file does not appear on the host.
	escaped := filepath.Join(outside, "escaped.txt")
	res = call(t, cs, "write_file", map[string]any{"path": escaped, "content": "escaped"})
	if !res.IsError || sandboxtest.Exists(escaped) {
		t.Errorf("write outside the root: isError=%v %q exists=%v", res.IsError, text(res), sandboxtest.Exists(escaped))
	}
	t.Logf("the server's answer to the write outside: %s", text(res))
	// Positive control: the server does consider outside one of its
	// directories, so only the sandbox refused the write.
	res = call(t, cs, "list_allowed_directories", map[string]any{})
	if !strings.Contains(text(res), outside) {
		t.Errorf("the server was not given %s: %q", outside, text(res))
	}

	// Each decision is in the audit log, as mcp__fs__TOOL.
	decisions := map[string]string{}
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := audit.Read(f, func(e audit.Event) error {
		if e.Type == audit.TypeDecision {
			decisions[e.Tool] += e.Decision + " "
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if decisions["mcp__fs__create_directory"] != "deny " || decisions["mcp__fs__write_file"] != "allow allow " ||
		decisions["mcp__fs__read_text_file"] != "allow deny " {
		t.Errorf("audit decisions: %v", decisions)
	}
}

// Without a rule, a tool call is asked; a client without elicitation is
// refused with a reason.
func TestProxyAskWithoutElicitation(t *testing.T) {
	script, modules := fsServer(t)
	ws := workspace(t)
	cs := connectStdio(t, nil, proxyArgs(ws, modules, nil, "node", script, ws)...)
	target := filepath.Join(ws, "unasked.txt")
	res := call(t, cs, "write_file", map[string]any{"path": target, "content": "x"})
	if !res.IsError || !strings.Contains(text(res), "mcp__fs__write_file") || !strings.Contains(text(res), "elicitation") || sandboxtest.Exists(target) {
		t.Errorf("unruled write_file: isError=%v %q", res.IsError, text(res))
	}
	// With elicitation the person decides.
	el := &elicitor{action: "accept"}
	cs = connectStdio(t, el, proxyArgs(ws, modules, nil, "node", script, ws)...)
	res = call(t, cs, "write_file", map[string]any{"path": target, "content": "approved"})
	if res.IsError || len(el.asked) != 1 || readFile(t, target) != "approved" {
		t.Errorf("approved write_file: isError=%v %q asked=%q", res.IsError, text(res), el.asked)
	}
}

// The downstream server's whole process tree, a detached background
// process included, dies with the proxy: when the client disconnects and
// when the proxy is killed outright.
func TestProxyProcessTreeDiesWithProxy(t *testing.T) {
	script, modules := fsServer(t)
	for _, how := range []string{"disconnect", "SIGKILL"} {
		t.Run(how, func(t *testing.T) {
			ws := workspace(t)
			wsMarker := filepath.Base(ws)
			bg := sandboxtest.Marker(t, "bg")
			server := []string{"bash", "-c", `(exec -a "$1" sleep 1000) & exec node "$2" "$3"`, "fs", bg, script, ws}
			client := sdk.NewClient(&sdk.Implementation{Name: "airlock-go-test", Version: "1"}, nil)
			cmd := exec.Command(airlockBin, proxyArgs(ws, modules, nil, server...)...)
			cmd.Stderr = &testWriter{t: t}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			defer sandboxtest.KillProcs(bg)
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
			// Positive control: the tree is there, on the host.
			if sandboxtest.WaitFor(bg, 10*time.Second) == 0 {
				t.Fatal("the background process never started")
			}
			var tree []int
			for _, pid := range append(sandboxtest.Procs(wsMarker), sandboxtest.Procs(bg)...) {
				if pid != cmd.Process.Pid {
					tree = append(tree, pid)
				}
			}
			if len(tree) < 2 {
				t.Fatalf("found %v, want the server and its background process", tree)
			}
			if how == "SIGKILL" {
				_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
			} else {
				_ = cs.Close()
			}
			deadline := time.Now().Add(15 * time.Second)
			for time.Now().Before(deadline) && slices.ContainsFunc(tree, sandboxtest.Alive) {
				time.Sleep(20 * time.Millisecond)
			}
			for _, pid := range tree {
				if sandboxtest.Alive(pid) {
					cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
					t.Errorf("pid %d (%q) survived the proxy (%s)", pid, cmdline, how)
				}
			}
		})
	}
}
