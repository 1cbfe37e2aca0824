package main

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRecipeHardLinks: a package store's file hard-linked into the
// workspace reads in the sandbox and cannot be rewritten there (the
// store's copy stays as it was); a copy can.
func TestRecipeHardLinks(t *testing.T) {
	bin := buildAirlock(t)
	home, ws := recipeDirs(t)
	store := filepath.Join(home, ".local", "share", "pnpm", "store")
	if err := os.MkdirAll(store, 0o755); err != nil {
		t.Fatal(err)
	}
	orig := filepath.Join(store, "index.js")
	os.WriteFile(orig, []byte("module.exports = 1\n"), 0o644)
	os.MkdirAll(filepath.Join(ws, "node_modules", "pkg"), 0o755)
	linked := filepath.Join(ws, "node_modules", "pkg", "index.js")
	if err := os.Link(orig, linked); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := recipeRun(t, bin, home, ws, "--", "sh", "-c", "cat node_modules/pkg/index.js; echo changed >> node_modules/pkg/index.js")
	// Refused at the open as root (the hard-link check), by a read-only
	// mount otherwise.
	refused := strings.Contains(errOut, "Read-only file system") ||
		(strings.Contains(errOut, "Operation not permitted") && strings.Contains(errOut, "write refused: a hard link"))
	if out != "module.exports = 1\n" || code == 0 || !refused {
		t.Errorf("hard-linked: exit %d, %q %q; want it read, and the write refused", code, out, errOut)
	}
	if b, _ := os.ReadFile(orig); string(b) != "module.exports = 1\n" {
		t.Errorf("the store's file changed: %q", b)
	}
	// The recipe's fix: a copy, not a link.
	os.Remove(linked)
	if out, err := exec.Command("cp", orig, linked).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	if code, _, errOut := recipeRun(t, bin, home, ws, "--", "sh", "-c", "echo changed >> node_modules/pkg/index.js"); code != 0 {
		t.Errorf("a copy: exit %d %q", code, errOut)
	}
	if b, _ := os.ReadFile(orig); string(b) != "module.exports = 1\n" {
		t.Errorf("the store's file changed through the copy: %q", b)
	}
}

// TestRecipeCorporateCA: the CA variables are dropped by the scrub; with
// --env and --allow-read, the command sees the variable and Python's ssl
// loads the CA from it.
func TestRecipeCorporateCA(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	bin := buildAirlock(t)
	home, ws := recipeDirs(t)
	ca := filepath.Join(home, "corp-ca.pem")
	writeCA(t, ca)
	load := `import os, ssl
for v in ("NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE"):
    print(v, os.environ.get(v, "unset"))
ctx = ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
print("loaded", len(ctx.get_ca_certs()))
`
	run := func(args ...string) (int, string, string) {
		cmd := exec.Command(bin, append([]string{"run", "--workspace", ws}, args...)...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "HOME="+home, "NODE_EXTRA_CA_CERTS="+ca, "SSL_CERT_FILE="+ca, "REQUESTS_CA_BUNDLE="+ca)
		return runCmd(t, cmd)
	}
	// The control: the scrub drops them.
	if code, out, _ := run("--", "python3", "-c", load); code == 0 || !strings.Contains(out, "NODE_EXTRA_CA_CERTS unset\nSSL_CERT_FILE unset\nREQUESTS_CA_BUNDLE unset\n") {
		t.Fatalf("control: exit %d, %q; want the variables dropped", code, out)
	}
	code, out, errOut := run("--env", "NODE_EXTRA_CA_CERTS", "--env", "SSL_CERT_FILE", "--env", "REQUESTS_CA_BUNDLE", "--allow-read", ca, "--", "python3", "-c", load)
	if code != 0 || !strings.Contains(out, "SSL_CERT_FILE "+ca+"\n") || !strings.Contains(out, "loaded 1\n") {
		t.Errorf("with the recipe: exit %d, %q %q", code, out, errOut)
	}
}

func writeCA(t *testing.T, path string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Corp Intercepting CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRecipeUnbuffered: through a pipe, python's line arrives while it
// runs with PYTHONUNBUFFERED=1 passed, and with --tty; without either,
// only at its end.
func TestRecipeUnbuffered(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	bin := buildAirlock(t)
	_, ws := recipeDirs(t)
	src := `import time; print("serving"); time.sleep(600)`
	// firstLine starts the run with stdout a pipe and says whether the
	// line came while the command still ran (the run is ended after).
	firstLine := func(args ...string) (string, bool) {
		cmd := exec.Command(bin, append(append([]string{"run", "--workspace", ws, "--timeout", "5s"}, args...), "--", "python3", "-c", src)...)
		cmd.Dir = ws
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(out).ReadString('\n')
		// The line came before the 5 s timeout ended python when the
		// run is still going now.
		running := cmd.Process.Signal(syscall.Signal(0)) == nil
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return line, running
	}
	if line, running := firstLine(); running && line != "" {
		t.Fatalf("control: python's line came through a pipe while it ran (%q); the recipe proves nothing", line)
	}
	for _, args := range [][]string{{"--env", "PYTHONUNBUFFERED=1"}, {"--tty"}} {
		line, running := firstLine(args...)
		if !running || strings.TrimSpace(line) != "serving" {
			t.Errorf("%v: line %q, still running %v; want the line while python runs", args, line, running)
		}
	}
}

// TestRecipeAgentCLI: an agent CLI run inside airlock run gets its key
// by --env and keeps its sessions in the --allow-write directory on the
// host; without it, nothing it writes there reaches the host, and
// ~/.ssh stays out of reach either way.
func TestRecipeAgentCLI(t *testing.T) {
	bin := buildAirlock(t)
	home, ws := recipeDirs(t)
	state := filepath.Join(home, ".agent-sandboxed")
	os.MkdirAll(state, 0o700)
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("PRIVATE\n"), 0o600)
	// The stand-in agent: records that it saw its key, and tries ~/.ssh.
	agent := `echo "key=${AGENT_API_KEY:-none}" > "$AGENT_CONFIG_DIR/session"; cat ~/.ssh/id_ed25519 2>/dev/null || echo no-ssh`
	run := func(args ...string) (int, string, string) {
		cmd := exec.Command(bin, append(append([]string{"run", "--workspace", ws}, args...), "--", "sh", "-c", agent)...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "HOME="+home, "AGENT_API_KEY=k-123", "AGENT_CONFIG_DIR="+state)
		return runCmd(t, cmd)
	}
	session := filepath.Join(state, "session")
	// The control: without the recipe, nothing reaches the host.
	run("--env", "AGENT_CONFIG_DIR")
	if _, err := os.Stat(session); err == nil {
		t.Fatal("control: the session reached the host without --allow-write")
	}
	code, out, errOut := run("--env", "AGENT_API_KEY", "--env", "AGENT_CONFIG_DIR", "--allow-write", state)
	if code != 0 || out != "no-ssh\n" {
		t.Errorf("exit %d, %q %q; want the agent to run without ~/.ssh", code, out, errOut)
	}
	if b, err := os.ReadFile(session); err != nil || string(b) != "key=k-123\n" {
		t.Errorf("the session on the host: %q %v", b, err)
	}
}
