package linux

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Limits are the cgroup budgets of one run; zero means no limit.
type Limits struct {
	MemoryBytes int64
	Pids        int64
	CPU         float64 // cores
}

// CgroupLayout describes where this process's cgroups are.
type CgroupLayout struct {
	Mode string // "v2", "v1" (v1 or hybrid: the controllers are on v1 hierarchies)
	// Dirs maps a controller (memory, pids, cpu) to the directory of this
	// process's cgroup for it; for v2 every controller maps to one dir.
	Dirs     map[string]string
	Writable bool
	Reason   string // why not writable, when it is not
	// Delegated names the directories in Dirs that are a delegated
	// ancestor of this process's own cgroup (cgroupdelegate.go).
	Delegated []string
}

var cgroupControllers = []string{"memory", "pids", "cpu"}

// ProbeCgroups finds this process's cgroups and whether it may create
// children in them for every controller the sandbox uses.
func ProbeCgroups() CgroupLayout {
	l := CgroupLayout{Dirs: map[string]string{}}
	var st unix.Statfs_t
	if err := unix.Statfs("/sys/fs/cgroup", &st); err != nil {
		l.Reason = "no cgroup filesystem at /sys/fs/cgroup"
		return l
	}
	own, err := ownCgroups()
	if err != nil {
		l.Reason = "read /proc/self/cgroup: " + err.Error()
		return l
	}
	if st.Type == unix.CGROUP2_SUPER_MAGIC {
		l.Mode = "v2"
		dir := path.Join("/sys/fs/cgroup", own[""])
		avail, _ := os.ReadFile(path.Join(dir, "cgroup.controllers"))
		for _, c := range cgroupControllers {
			if strings.Contains(" "+strings.TrimSpace(string(avail))+" ", " "+c+" ") {
				l.Dirs[c] = dir
			}
		}
	} else {
		l.Mode = "v1"
		for _, c := range cgroupControllers {
			mnt := path.Join("/sys/fs/cgroup", c)
			if p, ok := own[c]; ok {
				l.Dirs[c] = path.Join(mnt, p)
			}
		}
	}
	var missing []string
	for _, c := range cgroupControllers {
		d, ok := l.Dirs[c]
		if !ok {
			missing = append(missing, c+" (controller not available)")
			continue
		}
		if unix.Access(d, unix.W_OK) == nil {
			continue
		}
		root := "/sys/fs/cgroup"
		if l.Mode == "v1" {
			root = path.Join(root, c)
		}
		if a, ok := delegatedAncestor(l.Mode, root, d, c); ok {
			l.Dirs[c] = a
			if !slices.Contains(l.Delegated, a) {
				l.Delegated = append(l.Delegated, a)
			}
			continue
		}
		missing = append(missing, fmt.Sprintf("%s (%s not writable by uid %d, nor a delegated cgroup above it)", c, d, os.Getuid()))
	}
	l.Writable = len(missing) == 0
	if !l.Writable {
		l.Reason = "cgroup " + l.Mode + ": " + strings.Join(missing, "; ")
	}
	return l
}

// ownCgroups parses /proc/self/cgroup into controller → path ("" is v2).
func ownCgroups() (map[string]string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out, sc.Err()
}

// Cgroup is the set of cgroup directories of one run.
type Cgroup struct {
	mode string
	dirs []string          // created directories, one per hierarchy
	by   map[string]string // controller → created directory
}

// NewCgroup creates a child cgroup named name under this process's own
// cgroups and applies the limits. Memory is capped without swap.
func NewCgroup(l CgroupLayout, name string, lim Limits) (*Cgroup, error) {
	if !l.Writable {
		return nil, errors.New(l.Reason)
	}
	cg := &Cgroup{mode: l.Mode, by: map[string]string{}}
	made := map[string]string{}
	for _, c := range cgroupControllers {
		if c == "cpu" && lim.CPU == 0 {
			// Nothing to set there and nothing read from it: on v1 a
			// hierarchy less is a mkdir, a join of the helper's thread
			// and an rmdir less every run (on v2 it is the same
			// directory anyway).
			continue
		}
		parent := l.Dirs[c]
		dir, ok := made[parent]
		if !ok {
			dir = path.Join(parent, name)
			if err := os.Mkdir(dir, 0o755); err != nil {
				cg.Remove()
				return nil, fmt.Errorf("create cgroup: %w", err)
			}
			made[parent] = dir
			cg.dirs = append(cg.dirs, dir)
		}
		cg.by[c] = dir
	}
	if err := cg.apply(lim); err != nil {
		cg.Remove()
		return nil, err
	}
	return cg, nil
}

func (cg *Cgroup) apply(lim Limits) error {
	write := func(ctrl, file, val string) error {
		p := path.Join(cg.by[ctrl], file)
		if err := os.WriteFile(p, []byte(val), 0); err != nil {
			return fmt.Errorf("set %s: %w", file, err)
		}
		return nil
	}
	optional := func(ctrl, file, val string) {
		if _, err := os.Stat(path.Join(cg.by[ctrl], file)); err == nil {
			_ = write(ctrl, file, val)
		}
	}
	if cg.mode == "v2" {
		if lim.MemoryBytes > 0 {
			if err := write("memory", "memory.max", strconv.FormatInt(lim.MemoryBytes, 10)); err != nil {
				return err
			}
			optional("memory", "memory.swap.max", "0")
		}
		if lim.Pids > 0 {
			if err := write("pids", "pids.max", strconv.FormatInt(lim.Pids, 10)); err != nil {
				return err
			}
		}
		if lim.CPU > 0 {
			return write("cpu", "cpu.max", fmt.Sprintf("%d 100000", int64(lim.CPU*100000)))
		}
		return nil
	}
	if lim.MemoryBytes > 0 {
		if err := write("memory", "memory.limit_in_bytes", strconv.FormatInt(lim.MemoryBytes, 10)); err != nil {
			return err
		}
		// memsw exists only with swap accounting; where it does, no swap.
		optional("memory", "memory.memsw.limit_in_bytes", strconv.FormatInt(lim.MemoryBytes, 10))
		optional("memory", "memory.swappiness", "0")
		// v1 charges socket buffers to a cgroup only once it has a TCP
		// limit, and counts them apart from memory.limit_in_bytes: the
		// same amount bounds them (v2 counts both in memory.max).
		optional("memory", "memory.kmem.tcp.limit_in_bytes", strconv.FormatInt(lim.MemoryBytes, 10))
	}
	if lim.Pids > 0 {
		if err := write("pids", "pids.max", strconv.FormatInt(lim.Pids, 10)); err != nil {
			return err
		}
	}
	if lim.CPU > 0 {
		if err := write("cpu", "cpu.cfs_period_us", "100000"); err != nil {
			return err
		}
		return write("cpu", "cpu.cfs_quota_us", strconv.FormatInt(int64(lim.CPU*100000), 10))
	}
	return nil
}

// Add moves pid into every hierarchy of the run's cgroup.
func (cg *Cgroup) Add(pid int) error {
	for _, d := range cg.dirs {
		if err := os.WriteFile(path.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("join cgroup %s: %w", d, err)
		}
	}
	return nil
}

// TaskFiles lists the per-thread membership file ("tasks") of each v1
// hierarchy of the run. A thread that writes "0" there moves only itself,
// which the kernel does without the global threadgroup lock that moving a
// whole process (cgroup.procs) takes; that lock waits for an RCU grace
// period, several milliseconds on every run.
func (cg *Cgroup) TaskFiles() []string {
	if cg.mode == "v2" {
		return nil
	}
	out := make([]string, len(cg.dirs))
	for i, d := range cg.dirs {
		out[i] = path.Join(d, "tasks")
	}
	return out
}

// JoinSelf moves the calling thread into each of the task files given
// (see TaskFiles). The caller must be locked to its OS thread, and must
// exec from it: the other threads of a Go process stay where they were
// until execve ends them.
func JoinSelf(taskFiles []string) error {
	for _, f := range taskFiles {
		fd, err := unix.Open(f, unix.O_WRONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		_, err = unix.Write(fd, []byte("0"))
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("join %s: %w", path.Dir(f), err)
		}
	}
	return nil
}

// Dir returns the v2 directory (for CLONE_INTO_CGROUP), or "" on v1.
func (cg *Cgroup) Dir() string {
	if cg.mode == "v2" && len(cg.dirs) == 1 {
		return cg.dirs[0]
	}
	return ""
}

// OOMKills is how many times the memory limit's OOM killer fired.
func (cg *Cgroup) OOMKills() int64 {
	if cg.mode == "v2" {
		return keyedValue(path.Join(cg.by["memory"], "memory.events"), "oom_kill")
	}
	return keyedValue(path.Join(cg.by["memory"], "memory.oom_control"), "oom_kill")
}

// PidsLimitHits is how many forks the pids limit refused.
func (cg *Cgroup) PidsLimitHits() int64 {
	return keyedValue(path.Join(cg.by["pids"], "pids.events"), "max")
}

// PeakMemory is the highest memory use seen, in bytes (0 if unknown).
func (cg *Cgroup) PeakMemory() int64 {
	file := "memory.max_usage_in_bytes"
	if cg.mode == "v2" {
		file = "memory.peak"
	}
	b, err := ReadKernelFile(path.Join(cg.by["memory"], file))
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n
}

func keyedValue(path, key string) int64 {
	b, err := ReadKernelFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == key {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

// ReadKernelFile reads a small file of the kernel's (a cgroup counter,
// a /proc number) with plain system calls: os.ReadFile would stat it and,
// since cgroupfs and procfs files can be polled, register it with the
// runtime's poller and take it off again, five calls more for each of the
// files the supervisor reads at every run's start and end.
func ReadKernelFile(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	buf := make([]byte, 0, 512)
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, cap(buf))
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

// Kill sends SIGKILL to every process left in the cgroup until it is
// empty (cgroup.kill on v2), waiting at most a few seconds.
func (cg *Cgroup) Kill() error {
	if cg.mode == "v2" {
		if err := os.WriteFile(path.Join(cg.dirs[0], "cgroup.kill"), []byte("1"), 0); err == nil {
			return cg.waitEmpty()
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		pids := cg.pids()
		if len(pids) == 0 {
			return nil
		}
		for _, pid := range pids {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return fmt.Errorf("cgroup %s: processes left after SIGKILL", cg.dirs[0])
}

func (cg *Cgroup) waitEmpty() error {
	for i := 0; i < 2500; i++ {
		if len(cg.pids()) == 0 {
			return nil
		}
		time.Sleep(2 * time.Millisecond)
	}
	return fmt.Errorf("cgroup %s: not empty after kill", cg.dirs[0])
}

func (cg *Cgroup) pids() []int {
	var out []int
	for _, d := range cg.dirs {
		b, err := os.ReadFile(path.Join(d, "cgroup.procs"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// Destroy kills whatever is left in the run's cgroup and removes it. A
// cgroup whose processes are all gone (the usual case: the helper is PID
// 1 of its namespace, and its exit ends the rest) is removed at once; the
// kernel refuses to remove a cgroup that still has a process, so only a
// busy one needs Kill and the retries of Remove.
func (cg *Cgroup) Destroy() error {
	busy := false
	for _, d := range cg.dirs {
		if err := unix.Rmdir(d); err != nil && !errors.Is(err, unix.ENOENT) {
			busy = true
		}
	}
	if !busy {
		return nil
	}
	kerr := cg.Kill()
	rerr := cg.Remove()
	if kerr != nil {
		return kerr
	}
	return rerr
}

// Remove deletes the run's cgroup directories. A directory is busy for a
// moment after its last process exits, so removal is retried briefly.
func (cg *Cgroup) Remove() error {
	var firstErr error
	for _, d := range cg.dirs {
		var err error
		for i := 0; i < 500; i++ {
			if err = unix.Rmdir(d); err == nil || errors.Is(err, unix.ENOENT) {
				err = nil
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("remove cgroup %s: %w", d, err)
		}
	}
	return firstErr
}

// CgroupName is the name of one run's cgroup: it carries the supervisor's
// pid, so that a later supervisor can tell a cgroup whose owner died
// (SIGKILL leaves no chance to clean up) from one still in use.
func CgroupName(runID string) string {
	return fmt.Sprintf("airlock-%d-%s", os.Getpid(), runID)
}

// SweepStale removes the empty run cgroups, next to where this process
// makes its own, whose supervisor is no longer alive. A cgroup with
// processes in it, or whose owner lives, is left alone; so is anything
// not named by CgroupName.
func SweepStale(l CgroupLayout) (removed []string) {
	if !l.Writable {
		return nil
	}
	seen := map[string]bool{}
	for _, parent := range l.Dirs {
		if seen[parent] {
			continue
		}
		seen[parent] = true
		entries, err := os.ReadDir(parent)
		if err != nil {
			continue
		}
		for _, e := range entries {
			pid, ok := ownerPid(e.Name())
			if !ok || !e.IsDir() || pid == os.Getpid() {
				continue
			}
			if err := unix.Kill(pid, 0); err == nil || errors.Is(err, unix.EPERM) {
				continue // the owner (or a process reusing its pid) lives
			}
			dir := path.Join(parent, e.Name())
			if unix.Rmdir(dir) == nil { // fails while anything is inside
				removed = append(removed, dir)
			}
		}
	}
	return removed
}

func ownerPid(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "airlock-")
	if !ok {
		return 0, false
	}
	pidText, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(pidText)
	return pid, err == nil && pid > 0
}
