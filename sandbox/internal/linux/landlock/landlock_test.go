package landlock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A restricted process cannot be unrestricted, so every case that calls
// Restrict runs in a child: the test binary re-executed with childEnv
// naming the case and fixtureEnv carrying the fixture as JSON. The child
// reports a childResult as JSON on stdout.
const (
	childEnv   = "AIRLOCK_LANDLOCK_TEST_CHILD"
	fixtureEnv = "AIRLOCK_LANDLOCK_TEST_FIXTURE"
)

func TestMain(m *testing.M) {
	if name := os.Getenv(childEnv); name != "" {
		os.Exit(runChild(name))
	}
	os.Exit(m.Run())
}

// fixture is what the parent prepares for one case. RO, RW, RW2 and
// Outside are directories that each hold a file named "f".
type fixture struct {
	RO, RW, RW2, Outside string
	True                 string // an executable outside the fixture
	ParentPID            int
	AbstractSocket       string // name of an abstract UNIX socket the parent listens on, without '@'
	TCPPort              int    // a 127.0.0.1 port the parent listens on
}

type childResult struct {
	Status      Status
	RestrictErr string
	Errno       int    // of the probe; 0 when it succeeded
	ProbeErr    string // the probe's error when it is not an errno
}

// probeCase restricts a child with ruleset and runs probe in it. want is
// the errno the probe must fail with, or 0 when it must succeed.
type probeCase struct {
	name    string
	minABI  int
	ruleset func(f fixture) Ruleset
	probe   func(f fixture, st Status) error
	want    unix.Errno
	// wantRestrictErr, when set, is a substring of the error Restrict must
	// return; probe is then not run.
	wantRestrictErr string
}

func probeCases() []probeCase {
	read := func(f fixture) Ruleset { return Ruleset{Read: []string{f.RO}} }
	readWrite := func(f fixture) Ruleset { return Ruleset{Read: []string{f.RO}, Write: []string{f.RW, f.RW2}} }
	none := func(fixture) Ruleset { return Ruleset{} }
	list := func(f fixture) Ruleset { return Ruleset{List: []string{filepath.Dir(f.Outside)}} }
	return []probeCase{
		// Read.
		{name: "read/inside-Read", ruleset: read, probe: openFile("RO", unix.O_RDONLY), want: 0},
		{name: "read/outside-Read", ruleset: read, probe: openFile("Outside", unix.O_RDONLY), want: unix.EACCES},
		{name: "read/list-Read-dir", ruleset: read, probe: openFileAt("RO", ".", unix.O_RDONLY|unix.O_DIRECTORY), want: 0},
		{name: "read/list-outside-dir", ruleset: read, probe: openFileAt("Outside", ".", unix.O_RDONLY|unix.O_DIRECTORY), want: unix.EACCES},
		{name: "list/dir-listable", ruleset: list, probe: openFileAt("Outside", ".", unix.O_RDONLY|unix.O_DIRECTORY), want: 0},
		{name: "list/file-not-readable", ruleset: list, probe: openFile("Outside", unix.O_RDONLY), want: unix.EACCES},
		{
			name:    "read/missing-path-skipped",
			ruleset: func(f fixture) Ruleset { return Ruleset{Read: []string{f.RO, filepath.Join(f.RO, "missing")}} },
			probe: func(f fixture, st Status) error {
				if len(st.Skipped) != 1 || !strings.Contains(st.Skipped[0], "missing: does not exist") {
					return fmt.Errorf("Skipped = %q, want the missing path", st.Skipped)
				}
				return openFile("RO", unix.O_RDONLY)(f, st)
			},
			want: 0,
		},

		// A rule on a file: its directory rights fall away, the file
		// stays readable, its directory does not become listable.
		{
			name:    "read/file-rule",
			ruleset: func(f fixture) Ruleset { return Ruleset{Read: []string{filepath.Join(f.RO, "f")}} },
			probe:   openFile("RO", unix.O_RDONLY), want: 0,
		},
		{
			name:    "read/file-rule-dir-not-listable",
			ruleset: func(f fixture) Ruleset { return Ruleset{Read: []string{filepath.Join(f.RO, "f")}} },
			probe:   openFileAt("RO", ".", unix.O_RDONLY|unix.O_DIRECTORY), want: unix.EACCES,
		},
		{
			name:    "read/file-rule-beneath-a-file-skipped",
			ruleset: func(f fixture) Ruleset { return Ruleset{Read: []string{f.RO, filepath.Join(f.RO, "f", "x")}} },
			probe: func(f fixture, st Status) error {
				if len(st.Skipped) != 1 || !strings.Contains(st.Skipped[0], "f/x: does not exist") {
					return fmt.Errorf("Skipped = %q, want the path beneath a file", st.Skipped)
				}
				return openFile("RO", unix.O_RDONLY)(f, st)
			},
			want: 0,
		},
		// Planned rules (Rule.Type set): opened beneath their directory.
		{
			name: "planned/typed-rules-hold",
			ruleset: func(f fixture) Ruleset {
				return Ruleset{Rules: []Rule{{Path: filepath.Join(f.RO, "f"), Access: accessRead, Type: TypeFile}, {Path: f.RW, Access: accessWrite, Type: TypeDir}}}
			},
			probe: func(f fixture, st Status) error {
				if err := openFile("RO", unix.O_RDONLY)(f, st); err != nil {
					return err
				}
				return openFile("RW", unix.O_WRONLY)(f, st)
			},
			want: 0,
		},
		{
			name: "planned/symlink-not-followed",
			ruleset: func(f fixture) Ruleset {
				return Ruleset{Rules: []Rule{{Path: filepath.Join(f.RW2, "link"), Access: accessRead, Type: TypeDir}}}
			},
			probe: func(f fixture, st Status) error {
				if len(st.Skipped) != 1 || !strings.Contains(st.Skipped[0], "link: a symlink since the plan") {
					return fmt.Errorf("Skipped = %q, want the symlink", st.Skipped)
				}
				return openFile("Outside", unix.O_RDONLY)(f, st)
			},
			want: unix.EACCES,
		},
		{
			// The plan said directory; the path is a file now: the rule
			// holds with a file's rights.
			name: "planned/dir-now-a-file",
			ruleset: func(f fixture) Ruleset {
				return Ruleset{Rules: []Rule{{Path: filepath.Join(f.RO, "f"), Access: accessRead, Type: TypeDir}}}
			},
			probe: openFile("RO", unix.O_RDONLY), want: 0,
		},
		{
			name: "planned/missing-skipped",
			ruleset: func(f fixture) Ruleset {
				return Ruleset{Rules: []Rule{{Path: filepath.Join(f.RW2, "missing"), Access: accessRead, Type: TypeFile}, {Path: filepath.Join(f.RO, "f"), Access: accessRead, Type: TypeFile}}}
			},
			probe: func(f fixture, st Status) error {
				if len(st.Skipped) != 1 || !strings.Contains(st.Skipped[0], "missing: does not exist") {
					return fmt.Errorf("Skipped = %q, want the missing path", st.Skipped)
				}
				return openFile("RO", unix.O_RDONLY)(f, st)
			},
			want: 0,
		},

		// As many rules as a deny expansion of /etc makes: every rule
		// holds, and the path outside them stays refused.
		{name: "read/many-rules", ruleset: manyRules, probe: openFile("RO", unix.O_RDONLY), want: 0},
		{name: "read/many-rules-outside", ruleset: manyRules, probe: openFile("Outside", unix.O_RDONLY), want: unix.EACCES},

		// Write and create.
		{name: "write/under-Read", ruleset: readWrite, probe: openFile("RO", unix.O_WRONLY), want: unix.EACCES},
		{name: "write/under-Write", ruleset: readWrite, probe: openFile("RW", unix.O_WRONLY), want: 0},
		{name: "create/under-Read", ruleset: readWrite, probe: openFileAt("RO", "new", unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL), want: unix.EACCES},
		{name: "create/under-Write", ruleset: readWrite, probe: openFileAt("RW", "new", unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL), want: 0},
		{name: "create/device-node-under-Write", ruleset: readWrite, probe: mknodNull, want: unix.EACCES},

		// Exec. The loader and libraries are read from "/".
		{
			name:    "exec/outside-Exec",
			ruleset: func(f fixture) Ruleset { return Ruleset{Read: []string{"/"}, Exec: []string{f.RW}} },
			probe:   runTrue, want: unix.EACCES,
		},
		{
			name:    "exec/inside-Exec",
			ruleset: func(f fixture) Ruleset { return Ruleset{Read: []string{"/"}, Exec: []string{"/"}} },
			probe:   runTrue, want: 0,
		},

		// Refer: moving a file between hierarchies.
		{name: "refer/rename-between-Write-dirs", minABI: abiRefer, ruleset: readWrite, probe: rename("RW", "RW2"), want: 0},
		{name: "refer/link-from-Read-into-Write", minABI: abiRefer, ruleset: readWrite, probe: link("RO", "RW"), want: unix.EXDEV},
		{name: "refer/rename-into-Read", ruleset: readWrite, probe: rename("RW", "RO"), want: unix.EACCES},

		// Truncate.
		{name: "truncate/Read-file", minABI: abiTruncate, ruleset: readWrite, probe: truncate("RO"), want: unix.EACCES},
		{name: "truncate/Write-file", ruleset: readWrite, probe: truncate("RW"), want: 0},

		// Device ioctls. TCGETS on a pty master succeeds when allowed; on
		// /dev/null it reaches the driver, which answers ENOTTY.
		{
			name: "ioctl/ptmx-outside-IoctlDev", minABI: abiIoctlDev,
			ruleset: func(fixture) Ruleset { return Ruleset{Write: []string{"/dev/ptmx"}} },
			probe:   tcgets("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY), want: unix.EACCES,
		},
		{
			name:    "ioctl/ptmx-inside-IoctlDev",
			ruleset: func(fixture) Ruleset { return Ruleset{Write: []string{"/dev/ptmx"}, IoctlDev: []string{"/dev/ptmx"}} },
			probe:   tcgets("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY), want: 0,
		},
		{
			name: "ioctl/null-outside-IoctlDev", minABI: abiIoctlDev,
			ruleset: func(fixture) Ruleset { return Ruleset{Read: []string{"/dev/null"}, IoctlDev: []string{"/dev/ptmx"}} },
			probe:   tcgets("/dev/null", unix.O_RDONLY), want: unix.EACCES,
		},
		{
			name:    "ioctl/null-inside-IoctlDev-reaches-driver",
			ruleset: func(fixture) Ruleset { return Ruleset{Read: []string{"/dev"}, IoctlDev: []string{"/dev"}} },
			probe:   tcgets("/dev/null", unix.O_RDONLY), want: unix.ENOTTY,
		},

		// Scopes and TCP. The parent process is outside the child's domain.
		{name: "signal/scoped", minABI: abiScope, ruleset: func(fixture) Ruleset { return Ruleset{ScopeSignals: true} }, probe: signalParent, want: unix.EPERM},
		{name: "signal/unscoped", ruleset: none, probe: signalParent, want: 0},
		{name: "abstract-unix/scoped", minABI: abiScope, ruleset: func(fixture) Ruleset { return Ruleset{ScopeAbstractUnix: true} }, probe: connectAbstract, want: unix.EPERM},
		{name: "abstract-unix/unscoped", ruleset: none, probe: connectAbstract, want: 0},
		{name: "tcp/denied", minABI: abiNetTCP, ruleset: func(fixture) Ruleset { return Ruleset{DenyTCP: true} }, probe: connectTCP, want: unix.EACCES},
		{name: "tcp/allowed", ruleset: none, probe: connectTCP, want: 0},

		// Refusals happen before anything is enforced.
		{
			name:            "restrict/relative-path",
			ruleset:         func(fixture) Ruleset { return Ruleset{Read: []string{"relative/dir"}} },
			wantRestrictErr: "landlock: add rule for relative/dir: not an absolute path",
		},
	}
}

func TestRestrict(t *testing.T) {
	abi := ABI()
	if abi == 0 {
		t.Skip("Landlock unavailable on this kernel")
	}
	trueBin, err := exec.LookPath("true")
	if err != nil {
		t.Fatalf("find true(1): %v", err)
	}
	abstract := fmt.Sprintf("airlock-landlock-test-%d", os.Getpid())
	ul, err := net.Listen("unix", "@"+abstract)
	if err != nil {
		t.Fatalf("listen on abstract socket: %v", err)
	}
	t.Cleanup(func() { ul.Close() })
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on loopback: %v", err)
	}
	t.Cleanup(func() { tl.Close() })

	for _, c := range probeCases() {
		t.Run(c.name, func(t *testing.T) {
			if abi < c.minABI {
				t.Skipf("needs Landlock ABI %d, kernel has %d", c.minABI, abi)
			}
			t.Parallel()
			f := newFixture(t)
			f.True = trueBin
			f.AbstractSocket = abstract
			f.TCPPort = tl.Addr().(*net.TCPAddr).Port

			got := runInChild(t, c.name, f)

			if c.wantRestrictErr != "" {
				if !strings.Contains(got.RestrictErr, c.wantRestrictErr) {
					t.Fatalf("Restrict error = %q, want it to contain %q", got.RestrictErr, c.wantRestrictErr)
				}
				return
			}
			if got.RestrictErr != "" {
				t.Fatalf("Restrict: %s", got.RestrictErr)
			}
			if got.ProbeErr != "" {
				t.Fatalf("probe: %s", got.ProbeErr)
			}
			if unix.Errno(got.Errno) != c.want {
				t.Errorf("probe errno = %v (%d), want %v (%d)", unix.Errno(got.Errno), got.Errno, c.want, int(c.want))
			}
			// What Restrict reports is what Plan predicts.
			plan := Plan(c.ruleset(f))
			if !reflect.DeepEqual(got.Status, plan) {
				t.Errorf("Restrict Status = %+v\nPlan = %+v", got.Status, plan)
			}
		})
	}
}

func TestABI(t *testing.T) {
	abi := ABI()
	if abi < 1 {
		t.Fatalf("ABI() = %d, want >= 1: this machine is expected to have Landlock", abi)
	}
	if again := ABI(); again != abi {
		t.Fatalf("ABI() = %d then %d", abi, again)
	}
}

func TestPlan(t *testing.T) {
	abi := ABI()
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	all := Ruleset{
		Read:              []string{dir, filepath.Join(dir, "missing")},
		Write:             []string{file + "/under-a-file"},
		Exec:              []string{"relative"},
		IoctlDev:          []string{"/dev/null"},
		ScopeSignals:      true,
		ScopeAbstractUnix: true,
		DenyTCP:           true,
	}
	tests := []struct {
		name      string
		ruleset   Ruleset
		wantNames []string
		wantSkips []string
	}{
		{
			name:      "zero Ruleset asks only for the filesystem features",
			wantNames: []string{"filesystem", "refer", "truncate", "ioctl-dev"},
		},
		{
			name:      "every option",
			ruleset:   all,
			wantNames: []string{"filesystem", "refer", "truncate", "ioctl-dev", "net-tcp", "scope-signal", "scope-abstract-unix"},
			wantSkips: []string{
				filepath.Join(dir, "missing") + ": does not exist",
				file + "/under-a-file: does not exist",
				"relative: not an absolute path; Restrict refuses it",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := Plan(tt.ruleset)
			if st.ABI != abi {
				t.Errorf("ABI = %d, want ABI() = %d", st.ABI, abi)
			}
			if st.AllThreads != (abi >= abiTSync) {
				t.Errorf("AllThreads = %v with ABI %d", st.AllThreads, abi)
			}
			var names []string
			for _, f := range st.Features {
				names = append(names, f.Name)
				if f.Enforced != (abi >= f.MinABI) {
					t.Errorf("%s: Enforced = %v, MinABI %d, ABI %d", f.Name, f.Enforced, f.MinABI, abi)
				}
				if f.Enforced != (f.Reason == "") {
					t.Errorf("%s: Enforced = %v but Reason = %q", f.Name, f.Enforced, f.Reason)
				}
			}
			if !reflect.DeepEqual(names, tt.wantNames) {
				t.Errorf("features = %q, want %q", names, tt.wantNames)
			}
			if !reflect.DeepEqual(st.Skipped, tt.wantSkips) {
				t.Errorf("Skipped = %q, want %q", st.Skipped, tt.wantSkips)
			}
		})
	}
}

// TestFeaturesPerABI pins which feature each ABI enforces, for the ABIs
// this kernel cannot show.
func TestFeaturesPerABI(t *testing.T) {
	rs := Ruleset{ScopeSignals: true, ScopeAbstractUnix: true, DenyTCP: true}
	want := map[string]int{
		"filesystem": 1, "refer": 2, "truncate": 3, "net-tcp": 4,
		"ioctl-dev": 5, "scope-signal": 6, "scope-abstract-unix": 6,
	}
	for abi := 0; abi <= 9; abi++ {
		for _, f := range features(rs, abi) {
			if f.MinABI != want[f.Name] {
				t.Errorf("%s: MinABI = %d, want %d", f.Name, f.MinABI, want[f.Name])
			}
			if f.Enforced != (abi >= 1 && abi >= f.MinABI) {
				t.Errorf("ABI %d: %s Enforced = %v", abi, f.Name, f.Enforced)
			}
		}
		// The kernel rejects rights it does not know, so the masks must
		// grow exactly with the ABI.
		if got, want := handledFS(abi)&^handledFS(abi-1), newRights(abi); got != want {
			t.Errorf("ABI %d adds fs rights %#x, want %#x", abi, got, want)
		}
		if (handledNet(rs, abi) != 0) != (abi >= abiNetTCP) {
			t.Errorf("ABI %d: handledNet = %#x", abi, handledNet(rs, abi))
		}
		if (scoped(rs, abi) != 0) != (abi >= abiScope) {
			t.Errorf("ABI %d: scoped = %#x", abi, scoped(rs, abi))
		}
		if (restrictFlags(abi) != 0) != (abi >= abiTSync) {
			t.Errorf("ABI %d: restrict flags = %#x", abi, restrictFlags(abi))
		}
	}
	if accessWrite&(unix.LANDLOCK_ACCESS_FS_MAKE_CHAR|unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK) != 0 {
		t.Error("Write grants creating device nodes")
	}
}

func newRights(abi int) uint64 {
	switch abi {
	case 1:
		return accessBase
	case abiRefer:
		return unix.LANDLOCK_ACCESS_FS_REFER
	case abiTruncate:
		return unix.LANDLOCK_ACCESS_FS_TRUNCATE
	case abiIoctlDev:
		return unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return 0
}

// manyRules is a Read rule on 200 existing files of /usr/bin (their
// directory is not in the ruleset) and as many missing names, RO last.
func manyRules(f fixture) Ruleset {
	var rs Ruleset
	ents, _ := os.ReadDir("/usr/bin")
	for i, e := range ents {
		if i == 200 {
			break
		}
		rs.Read = append(rs.Read, filepath.Join("/usr/bin", e.Name()), filepath.Join(f.RW2, fmt.Sprintf("missing-%d", i)))
	}
	rs.Read = append(rs.Read, f.RO)
	return rs
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	base := t.TempDir()
	f := fixture{
		RO:        filepath.Join(base, "ro"),
		RW:        filepath.Join(base, "rw"),
		RW2:       filepath.Join(base, "rw2"),
		Outside:   filepath.Join(base, "outside"),
		ParentPID: os.Getpid(),
	}
	for _, d := range []string{f.RO, f.RW, f.RW2, f.Outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "f"), []byte("data"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// RW2/link leads to Outside: a planned rule there must not follow it.
	if err := os.Symlink(f.Outside, filepath.Join(f.RW2, "link")); err != nil {
		t.Fatal(err)
	}
	return f
}

func runInChild(t *testing.T, name string, f fixture) childResult {
	t.Helper()
	js, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"="+name, fixtureEnv+"="+string(js))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\nstdout: %s\nstderr: %s", err, out, stderr.Bytes())
	}
	var r childResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("child result %q: %v\nstderr: %s", out, err, stderr.Bytes())
	}
	return r
}

// runChild is the child's whole life: restrict, probe once, report.
func runChild(name string) int {
	var c *probeCase
	for _, pc := range probeCases() {
		if pc.name == name {
			c = &pc
			break
		}
	}
	var f fixture
	if c == nil {
		fmt.Fprintf(os.Stderr, "unknown case %q\n", name)
		return 2
	}
	if err := json.Unmarshal([]byte(os.Getenv(fixtureEnv)), &f); err != nil {
		fmt.Fprintf(os.Stderr, "fixture: %v\n", err)
		return 2
	}

	// The domain lands on this thread only (before ABI 8); keep the
	// probe on it.
	runtime.LockOSThread()
	var r childResult
	st, err := Restrict(c.ruleset(f))
	r.Status = st
	if err != nil {
		r.RestrictErr = err.Error()
	} else if err := c.probe(f, st); err != nil {
		var errno unix.Errno
		if errors.As(err, &errno) {
			r.Errno = int(errno)
		} else {
			r.ProbeErr = err.Error()
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		fmt.Fprintf(os.Stderr, "report: %v\n", err)
		return 2
	}
	return 0
}

// Probes. Each makes the one syscall under test directly, so that it runs
// on the restricted thread and its errno comes back unchanged.

func dirOf(f fixture, which string) string {
	return map[string]string{"RO": f.RO, "RW": f.RW, "RW2": f.RW2, "Outside": f.Outside}[which]
}

func openFile(dir string, flags int) func(fixture, Status) error {
	return openFileAt(dir, "f", flags)
}

func openFileAt(dir, name string, flags int) func(fixture, Status) error {
	return func(f fixture, _ Status) error {
		fd, err := unix.Open(filepath.Join(dirOf(f, dir), name), flags|unix.O_CLOEXEC, 0o644)
		if err != nil {
			return err
		}
		return unix.Close(fd)
	}
}

func mknodNull(f fixture, _ Status) error {
	return unix.Mknod(filepath.Join(f.RW, "null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3)))
}

func rename(from, to string) func(fixture, Status) error {
	return func(f fixture, _ Status) error {
		return unix.Rename(filepath.Join(dirOf(f, from), "f"), filepath.Join(dirOf(f, to), "moved"))
	}
}

func link(from, to string) func(fixture, Status) error {
	return func(f fixture, _ Status) error {
		return unix.Link(filepath.Join(dirOf(f, from), "f"), filepath.Join(dirOf(f, to), "linked"))
	}
}

func truncate(dir string) func(fixture, Status) error {
	return func(f fixture, _ Status) error {
		return unix.Truncate(filepath.Join(dirOf(f, dir), "f"), 0)
	}
}

func tcgets(path string, flags int) func(fixture, Status) error {
	return func(fixture, Status) error {
		fd, err := unix.Open(path, flags|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open %s: %v (want the ioctl to be what fails)", path, err)
		}
		defer unix.Close(fd)
		_, err = unix.IoctlGetTermios(fd, unix.TCGETS)
		return err
	}
}

// runTrue forks from the locked, restricted thread, so the child inherits
// the domain; execve is what Landlock checks.
func runTrue(f fixture, _ Status) error {
	cmd := exec.Command(f.True)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr, os.Stderr
	return cmd.Run()
}

func signalParent(f fixture, _ Status) error {
	return unix.Kill(f.ParentPID, 0)
}

func connectAbstract(f fixture, _ Status) error {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %v", err)
	}
	defer unix.Close(fd)
	return unix.Connect(fd, &unix.SockaddrUnix{Name: "@" + f.AbstractSocket})
}

func connectTCP(f fixture, _ Status) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %v", err)
	}
	defer unix.Close(fd)
	return unix.Connect(fd, &unix.SockaddrInet4{Port: f.TCPPort, Addr: [4]byte{127, 0, 0, 1}})
}
