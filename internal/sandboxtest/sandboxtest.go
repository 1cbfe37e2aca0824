// Package sandboxtest is what the sandbox attack tests share: a workspace
// and a fake $HOME with planted secrets, an Executor for a preset, one
// probe run both inside the sandbox and directly on the host (the positive
// control that proves the probe works), and the host-side evidence the
// tests judge by: processes found by a marker in their argv, listeners
// that count the connections they accept, files that must not appear or
// change.
//
// It asserts nothing about the sandbox; the tests in package sandbox_test
// do. Every helper takes a testing.TB, fails the test when the harness
// itself breaks (never when the sandbox does what it should), and cleans
// up what it made through t.Cleanup.
//
// The same tests run as root and as an unprivileged user (uid 65534, see
// Unprivileged). What only root can make on the host (a network interface,
// a setuid binary) is made by the root parent and handed to the
// unprivileged run through the Env* variables.
package sandboxtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	// The tests' sandboxes serve their networks in process.
	_ "github.com/airlockhq/airlock/egress/netstack"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// Python is the interpreter every probe uses, by absolute path: the
// caller's PATH may lead to a shim under a home directory (pyenv) that the
// sandbox hides, and the control must run the very same program.
const Python = "/usr/bin/python3"

// Variables through which the root parent of an unprivileged run hands
// over what only root can make.
const (
	// EnvAsNobody is "1" in the unprivileged re-run of the suite.
	EnvAsNobody = "AIRLOCK_TEST_AS_NOBODY"
	// EnvHostAddr is a non-loopback IPv4 address the parent assigned to
	// an interface it created.
	EnvHostAddr = "AIRLOCK_TEST_HOST_ADDR"
	// EnvSetuidBinary is a copy of id(1), owned by root and setuid.
	EnvSetuidBinary = "AIRLOCK_TEST_SETUID_BINARY"
	// EnvSystemSecrets is a directory under /etc holding root's planted
	// credentials (SystemSecrets).
	EnvSystemSecrets = "AIRLOCK_TEST_SYSTEM_SECRETS"
)

// NobodyUID is the unprivileged user the suite re-runs as.
const NobodyUID = 65534

// DefaultTimeout bounds a probe that sets no Timeout of its own.
const DefaultTimeout = 20 * time.Second

// Unprivileged reports whether the suite runs as a user other than root.
func Unprivileged() bool { return os.Geteuid() != 0 }

// Marker returns a string unique to this call, usable in argv, file names
// and abstract socket names, so host-side evidence can be found without
// mistaking anything else for it.
func Marker(t testing.TB, what string) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("marker: %v", err)
	}
	return "airlock-" + what + "-" + hex.EncodeToString(b[:])
}

// Workspace creates an empty workspace directory.
func Workspace(t testing.TB) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatalf("workspace: %v", err)
	}
	return dir
}

// GitWorkspace creates a workspace that is a git repository with one
// commit, so .git/hooks and .git/config exist as git made them.
func GitWorkspace(t testing.TB) string {
	t.Helper()
	ws := Workspace(t)
	for _, args := range [][]string{
		{"init", "-q", "."},
		{"config", "user.email", "attack@test.invalid"},
		{"config", "user.name", "attack test"},
		{"commit", "-q", "--allow-empty", "-m", "init"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return ws
}

// Secrets are fake credentials planted in a fake $HOME.
type Secrets struct {
	Home   string // the fake $HOME; HOME points at it for the test
	SSHKey string // ~/.ssh/id_ed25519
	AWS    string // ~/.aws/credentials
	// Value is in every secret file; it must never appear in the
	// sandbox's output.
	Value string
}

// PlantSecrets makes a fake $HOME holding ~/.ssh/id_ed25519 and
// ~/.aws/credentials, and points HOME at it (the sandbox reads
// os.UserHomeDir).
func PlantSecrets(t *testing.T) Secrets {
	t.Helper()
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatalf("fake home: %v", err)
	}
	t.Setenv("HOME", home)
	s := Secrets{Home: home, Value: Marker(t, "secret")}
	s.SSHKey = writeFile(t, filepath.Join(home, ".ssh", "id_ed25519"), 0o600,
		"-----BEGIN OPENSSH PRIVATE KEY-----\n"+s.Value+"\n-----END OPENSSH PRIVATE KEY-----\n")
	s.AWS = writeFile(t, filepath.Join(home, ".aws", "credentials"), 0o600,
		"[default]\naws_access_key_id = AKIAAIRLOCKTEST\naws_secret_access_key = "+s.Value+"\n")
	return s
}

func writeFile(t testing.TB, path string, mode os.FileMode, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	return path
}

// Sandbox is what a test attacks: a workspace and an Executor for a
// preset over it.
type Sandbox struct {
	Workspace string
	Executor  *sandbox.Executor
}

// New builds an Executor for the named preset with ws as its workspace;
// edit, when not nil, changes the spec first (a budget, an extra read
// path). HOME must already point where the test wants it: the profile
// expands "~" and the sandbox places its private HOME from it.
func New(t testing.TB, preset, ws string, edit func(*profile.Spec)) *Sandbox {
	t.Helper()
	if os.Getenv(EnvAsNobody) == "1" && !Unprivileged() {
		t.Fatalf("%s=1 but running as root: the unprivileged run did not drop privileges", EnvAsNobody)
	}
	spec, err := profile.LookupPreset(preset)
	if err != nil {
		t.Fatal(err)
	}
	spec.Workspace = ws
	if edit != nil {
		edit(&spec)
	}
	p, err := profile.New(spec)
	if err != nil {
		t.Fatalf("profile: %v", err)
	}
	ex, err := sandbox.New(p)
	if err != nil {
		t.Fatalf("sandbox.New: %v", err)
	}
	t.Cleanup(func() { ex.Close() })
	return &Sandbox{Workspace: ws, Executor: ex}
}

// Degraded reports whether the Executor's Report says g is given only by
// a weaker mechanism on this host (as resource limits are without a
// writable cgroup).
func (s *Sandbox) Degraded(g profile.Guarantee) bool {
	return s.Executor.Report().Status(g).Status == sandbox.Degraded
}

// Probe is one command, run inside the sandbox and, as the positive
// control, directly on the host.
type Probe struct {
	// Args is the argv; Args[0] is an absolute path (see Sh and Py).
	Args []string
	// Dir is the working directory; empty means the workspace.
	Dir string
	// Env adds KEY=VALUE entries: to the caller's environment on the
	// host, to the profile's in the sandbox.
	Env []string
	// Stdin is the standard input; nil means /dev/null.
	Stdin *os.File
	// Timeout bounds the run; zero means DefaultTimeout.
	Timeout time.Duration
}

// Sh is the argv of a /bin/sh script; args become $1, $2, ...
func Sh(script string, args ...string) []string {
	return append([]string{"/bin/sh", "-c", script, "probe"}, args...)
}

// Py is the argv of a Python program; args become sys.argv[1:].
func Py(src string, args ...string) []string {
	return append([]string{Python, "-c", src}, args...)
}

// Outcome is how one run of a Probe ended.
type Outcome struct {
	ExitCode int // -1 when killed by a signal
	Stdout   string
	Stderr   string
	// Result is the sandbox's Result; nil for a host run.
	Result *sandbox.Result
}

// Output is stdout and stderr together.
func (o Outcome) Output() string { return o.Stdout + o.Stderr }

func (o Outcome) String() string {
	var b strings.Builder
	if o.Result != nil {
		fmt.Fprintf(&b, "status %s, ", o.Result.Status)
	}
	fmt.Fprintf(&b, "exit %d", o.ExitCode)
	if out := strings.TrimSpace(o.Output()); out != "" {
		if len(out) > 2000 {
			out = out[:2000] + "..."
		}
		fmt.Fprintf(&b, ", output:\n%s", out)
	}
	return b.String()
}

func (s *Sandbox) timeout(p Probe) time.Duration {
	if p.Timeout > 0 {
		return p.Timeout
	}
	return DefaultTimeout
}

// Host runs p directly on the host, without any sandbox: the positive
// control. Its working directory defaults to the workspace, like the
// sandboxed run's.
func (s *Sandbox) Host(t testing.TB, p Probe) Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout(p))
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Args[0], p.Args[1:]...)
	cmd.Dir = p.Dir
	if cmd.Dir == "" {
		cmd.Dir = s.Workspace
	}
	cmd.Env = append(os.Environ(), p.Env...)
	if p.Stdin != nil {
		cmd.Stdin = p.Stdin
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	o := Outcome{Stdout: stdout.String(), Stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		o.ExitCode = ee.ExitCode()
	default:
		t.Fatalf("host control %q: %v", p.Args, err)
	}
	return o
}

// Running is a probe started in the sandbox and not yet waited for.
type Running struct {
	t    testing.TB
	proc *sandbox.Process
}

// Start starts p in the sandbox; the caller gathers evidence while it runs
// and then calls Wait.
func (s *Sandbox) Start(t testing.TB, p Probe) *Running {
	t.Helper()
	cmd := sandbox.Cmd{Args: p.Args, Dir: p.Dir, Env: p.Env, Timeout: s.timeout(p)}
	if p.Stdin != nil {
		cmd.Stdin = p.Stdin
	}
	proc, err := s.Executor.Prepare(context.Background(), cmd)
	if err != nil {
		t.Fatalf("prepare %q: %v", p.Args, err)
	}
	if err := proc.Start(); err != nil {
		t.Fatalf("start %q in the sandbox: %v", p.Args, err)
	}
	return &Running{t: t, proc: proc}
}

// Wait waits for the run to end. An error from Wait is fatal: it means the
// sandbox could not clean up after the run (a process or cgroup left).
func (r *Running) Wait() Outcome {
	r.t.Helper()
	res, err := r.proc.Wait()
	if err != nil {
		r.t.Fatalf("sandbox wait: %v (result %+v)", err, res)
	}
	return Outcome{ExitCode: res.ExitCode, Stdout: string(res.Stdout), Stderr: string(res.Stderr), Result: res}
}

// Kill ends the run and every process in it; Wait then reports
// StatusCancelled.
func (r *Running) Kill() error { return r.proc.Kill() }

// Run runs p in the sandbox and waits for it.
func (s *Sandbox) Run(t testing.TB, p Probe) Outcome {
	t.Helper()
	return s.Start(t, p).Wait()
}

// FileState is what a host file looks like: absent, or its content's hash.
func FileState(path string) string {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "absent"
	}
	if err != nil {
		return "unreadable: " + err.Error()
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Exists reports whether path exists on the host (without following a
// final symlink).
func Exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// SystemPath is the PATH the unprivileged run and the host controls use:
// only system directories, readable by every user.
const SystemPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
