package sandboxtest

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Procs returns the pids of the host processes whose argv contains
// marker. Zombies have no argv and are not listed.
func Procs(marker string) []int {
	var out []int
	forEachPid(func(pid int) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(marker)) {
			out = append(out, pid)
		}
	})
	return out
}

func forEachPid(f func(pid int)) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	self := os.Getpid()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		f(pid)
	}
}

// WaitGone waits up to d for every process with marker to be gone and
// returns those still there.
func WaitGone(marker string, d time.Duration) []int {
	deadline := time.Now().Add(d)
	for {
		left := Procs(marker)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// WaitFor waits up to d for a process with marker and returns its pid, or
// 0 when none appeared.
func WaitFor(marker string, d time.Duration) int {
	deadline := time.Now().Add(d)
	for {
		if pids := Procs(marker); len(pids) > 0 {
			return pids[0]
		}
		if time.Now().After(deadline) {
			return 0
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// KillProcs sends SIGKILL, by pid, to the host processes with marker; the
// positive controls use it to end what they deliberately left running.
func KillProcs(marker string) {
	for _, pid := range Procs(marker) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// Alive reports whether pid exists on the host and is not a zombie.
func Alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}

// StartHostProcess starts a host process that sleeps, with marker as its
// argv[0] and env added to its environment, and kills it when the test
// ends.
func StartHostProcess(t testing.TB, marker string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := &exec.Cmd{Path: "/bin/sleep", Args: []string{marker, "300"}, Env: append(os.Environ(), env...)}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start host marker process: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// PidNS is the pid namespace of a run, held open for as long as the
// test looks at it. The kernel numbers namespaces from a pool whose
// freed numbers it hands out again at once: once a run's namespace is
// gone, the next namespace made anywhere on the host (another test's
// sandbox) may get its number, and that run's processes (its init and
// command: "2 processes left") would be counted as this one's. An open
// handle keeps the namespace, and so its number, from being freed.
type PidNS struct {
	f  *os.File
	id string
}

// OpenPidNamespace holds pid's pid namespace until the test ends.
func OpenPidNamespace(t testing.TB, pid int) *PidNS {
	t.Helper()
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/ns/pid")
	if err != nil {
		t.Fatalf("open the pid namespace of pid %d: %v (did it end already?)", pid, err)
	}
	id, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil {
		f.Close()
		t.Fatalf("read the pid namespace of pid %d: %v", pid, err)
	}
	t.Cleanup(func() { f.Close() })
	return &PidNS{f: f, id: id}
}

// Procs counts the host processes in the namespace.
func (n *PidNS) Procs() int {
	c := 0
	forEachPid(func(pid int) {
		if ns, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/pid"); ns == n.id {
			c++
		}
	})
	return c
}

// Sampler calls a measurement repeatedly in the background and keeps the
// largest value seen.
type Sampler struct {
	stop chan struct{}
	done chan struct{}
	max  atomic.Int64
}

// Sample starts calling f every interval until Stop.
func Sample(interval time.Duration, f func() int64) *Sampler {
	s := &Sampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			if v := f(); v > s.max.Load() {
				s.max.Store(v)
			}
			select {
			case <-s.stop:
				return
			case <-time.After(interval):
			}
		}
	}()
	return s
}

// Stop ends the sampling and returns the largest value seen.
func (s *Sampler) Stop() int64 {
	close(s.stop)
	<-s.done
	return s.max.Load()
}

// AnonRSS is the anonymous resident memory (RssAnon) of a host process,
// in bytes; 0 when it is gone.
func AnonRSS(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// Listener is a host listener that counts the connections it accepts:
// the evidence that a connection did or did not arrive.
type Listener struct {
	Network string // "tcp" or "unix"
	Address string // host:port, a socket path, or "@name" for an abstract socket

	ln       net.Listener
	accepted atomic.Int64
	wg       sync.WaitGroup
}

// Listen opens a listener on the host; it is closed when the test ends.
func Listen(t testing.TB, network, address string) *Listener {
	t.Helper()
	ln, err := net.Listen(network, address)
	if err != nil {
		t.Fatalf("listen %s %s: %v", network, address, err)
	}
	l := &Listener{Network: network, Address: ln.Addr().String(), ln: ln}
	if network == "unix" && strings.HasPrefix(address, "@") {
		l.Address = address
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				continue
			}
			l.accepted.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		l.wg.Wait()
		if network == "unix" && !strings.HasPrefix(address, "@") {
			os.Remove(address)
		}
	})
	return l
}

// Accepted is how many connections the listener has accepted so far.
func (l *Listener) Accepted() int64 { return l.accepted.Load() }

// WaitAccepted waits up to d for the count to reach n and returns it.
func (l *Listener) WaitAccepted(n int64, d time.Duration) int64 {
	deadline := time.Now().Add(d)
	for l.Accepted() < n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	return l.Accepted()
}

// OutsideDir creates a directory outside anything the sandbox shows
// (under /var/tmp, which no preset binds) and removes it when the test
// ends.
func OutsideDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "airlock-attack-")
	if err != nil {
		t.Fatalf("outside dir: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Clean(dir)
}

// ShortTempDir creates a directory under the system temp directory with a
// short path (a socket path must fit in 108 bytes, and t.TempDir's names
// the test) and removes it when the test ends.
func ShortTempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "al")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
