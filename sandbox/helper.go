package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox/internal/linux"
)

// helper is one stage-2 helper: cloned into its Executor's namespaces
// (and, with a writable cgroup, into a cgroup of its own with the
// profile's budgets), blocked on its config socket. Nothing of it
// depends on a run, so it is cloned before there is one (Executor.warmUp)
// and takes the run's config and descriptors at Start (send).
type helper struct {
	cmd *helperProc
	// conf is the supervisor's end of the config socket (the helper's
	// descriptor 3): the Config and the run's descriptors, then EOF.
	conf *os.File
	errR *os.File    // the helper's error pipe (its descriptor 4)
	outR [2]*os.File // its stdout and stderr
	cg   *linux.Cgroup
	// spawning is the spawner cloning the helper, between startHelper
	// and finishStart (awaitSpawn).
	spawning *linux.Spawning
	// cgMade, when not nil, says when the cgroup made beside the
	// helper's start (cgroup v1, newHelper) is there (cg set) or could
	// not be made; cgroupMade waits for it.
	cgMade chan error
	// mounts is the supervisor's /proc/self/mounts, opened before the
	// clone: it polls POLLPRI once the mount table the helper's mount
	// namespace was copied from has changed since (usable). A raw
	// descriptor: Go's poller, polling an *os.File, would take the event.
	mounts int
}

// helperFDs is the number of descriptors a helper has before its run's:
// stdin, stdout, stderr, the config socket and the error pipe. The run's
// own are numbered from here (Config.Handoff).
const helperFDs = 5

// helperSpec is what a helper's clone depends on, the same for every
// run of an Executor: so a helper cloned before the run fits it.
type helperSpec struct {
	// flags are the run's namespaces: its network's when the profile's
	// network is none or the egress gateway serves it (usesGateway).
	flags   uintptr
	budgets profile.Budgets
	// cgroups is where the helper's cgroup is made; only when writable.
	cgroups  linux.CgroupLayout
	writable bool
}

func newHelperSpec(p *profile.Profile, h HostInfo) helperSpec {
	flags := uintptr(unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS)
	if n := p.Spec().Network; n.Mode == profile.NetworkModeNone || usesGateway(n, h) {
		flags |= unix.CLONE_NEWNET
	}
	return helperSpec{flags: flags, budgets: p.Spec().Budgets, cgroups: h.cgroups, writable: h.CgroupWritable}
}

// newHelper clones a helper. On error nothing of it is left.
func newHelper(spec helperSpec) (*helper, error) {
	h, err := startHelper(spec)
	if err != nil {
		return nil, err
	}
	if err := h.finishStart(spec); err != nil {
		h.discard()
		return nil, err
	}
	return h, nil
}

// startHelper is newHelper's first half: it returns once the helper's
// clone is under way, and the caller calls finishStart, the second half,
// after other work of its own. On error nothing of it is left.
func startHelper(spec helperSpec) (h *helper, err error) {
	h = &helper{mounts: -1}
	var closeAfter []*os.File
	defer func() {
		for _, f := range closeAfter {
			f.Close()
		}
		if err != nil {
			h.discard()
			h = nil
		}
	}()
	// Before the clone: a mount made or removed while it is under way
	// counts as one after it.
	if h.mounts, err = unix.Open("/proc/self/mounts", unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
		return h, &SetupError{Step: "namespaces", Err: fmt.Errorf("open /proc/self/mounts: %w", err)}
	}
	// On cgroup v2 the helper is cloned straight into its cgroup, made
	// first; on v1 its thread moves itself in as its first step
	// (Config.JoinCgroup; a thread moving itself skips the kernel's slow
	// whole-process migration), so the cgroup is made once the helper is
	// on its way, on a goroutine beside its exec and Go start and the
	// run's preparation (docs/BENCHMARKS.md). Either way it is made,
	// with its limits, before the helper has its config (cgroupMade):
	// before anything of the run.
	intoCgroup := spec.cgroups.Mode == "v2"
	if spec.writable && intoCgroup {
		if err := h.newCgroup(spec); err != nil {
			return h, err
		}
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return h, &SetupError{Step: "pipe", Err: fmt.Errorf("config socketpair: %w", err)}
	}
	h.conf = os.NewFile(uintptr(fds[0]), "config socket")
	confChild := os.NewFile(uintptr(fds[1]), "config socket")
	closeAfter = append(closeAfter, confChild)
	var errW *os.File
	if h.errR, errW, err = os.Pipe(); err != nil {
		return h, &SetupError{Step: "pipe", Err: err}
	}
	closeAfter = append(closeAfter, errW)
	var outW [2]*os.File
	for i := range outW {
		if h.outR[i], outW[i], err = os.Pipe(); err != nil {
			return h, &SetupError{Step: "pipe", Err: err}
		}
		closeAfter = append(closeAfter, outW[i])
	}
	uid, gid := os.Getuid(), os.Getgid()
	flags := spec.flags
	c := &exec.Cmd{
		Path: "/proc/self/exe",
		Args: []string{linux.Stage2Arg0},
		// The helper's own environment (the command's is in the config).
		// Two Ps, not one: the init's signal.Notify of every signal
		// (catchSignals) then runs beside the mount view instead of
		// waiting for the helper's thread to give up its P, about 1 ms
		// a run less at the same CPU time (docs/BENCHMARKS.md).
		Env: []string{"GOMAXPROCS=2"},
		// Stdin is /dev/null until the run sends its own (send).
		Stdout:     outW[0],
		Stderr:     outW[1],
		ExtraFiles: []*os.File{confChild, errW},
		SysProcAttr: &syscall.SysProcAttr{
			Cloneflags:                 flags,
			UidMappings:                []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
			GidMappings:                []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
			GidMappingsEnableSetgroups: false,
			// Per thread: the Go runtime ends a thread only under a
			// goroutine that exits locked to it, which no supervisor code
			// does (notifyrecv.go); a warm helper dies with its supervisor.
			Pdeathsig: syscall.SIGKILL,
			Setsid:    true,
			// The helper keeps the caller's uid; for a non-root uid,
			// execve would drop the namespace capabilities the setup
			// needs, so they pass as ambient capabilities. The helper
			// drops every capability again before it execs the command.
			AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP, unix.CAP_SYS_CHROOT},
		},
	}
	if h.cg != nil && intoCgroup {
		fd, err := unix.Open(h.cg.Dir(), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return h, &SetupError{Step: "cgroup", Err: err}
		}
		defer unix.Close(fd)
		c.SysProcAttr.UseCgroupFD = true
		c.SysProcAttr.CgroupFD = fd
	}
	if err := h.startSpawn(c, flags, uid, gid); err != nil {
		return h, err
	}
	return h, nil
}

// finishStart waits for the clone startHelper started, the helper then
// released to stage 2, and on cgroup v1 starts making its cgroup. On
// error the caller discards h.
func (h *helper) finishStart(spec helperSpec) error {
	if err := h.awaitSpawn(); err != nil {
		return err
	}
	if spec.writable && spec.cgroups.Mode != "v2" {
		h.cgMade = make(chan error, 1)
		go func() { h.cgMade <- h.newCgroup(spec) }()
	}
	return nil
}

// cgroupMade waits for the helper's cgroup, when it is made beside its
// start, and returns why it could not be made. The helper gets its
// config only after it returns nil: its budgets are in place before
// anything of the run.
func (h *helper) cgroupMade() error {
	if h.cgMade == nil {
		return nil
	}
	err := <-h.cgMade
	h.cgMade = nil
	return err
}

// newCgroup makes the helper's cgroup with the profile's budgets.
func (h *helper) newCgroup(spec helperSpec) (err error) {
	b := spec.budgets
	h.cg, err = linux.NewCgroup(spec.cgroups, linux.CgroupName(randomID()), linux.Limits{
		MemoryBytes: int64(b.Memory), Pids: int64(withInit(b.Pids)), CPU: b.CPU,
	})
	if err != nil {
		return &SetupError{Step: "cgroup", Err: err}
	}
	return nil
}

// startSpawn starts the helper c describes by the spawner
// (linux.StartSpawn), where there is one (awaitSpawn waits for it), else
// by c.Start.
func (h *helper) startSpawn(c *exec.Cmd, flags uintptr, uid, gid int) error {
	spec := linux.HelperSpawn{Flags: uint64(flags), CgroupFD: -1, UID: uid, GID: gid, Release: true}
	if c.SysProcAttr.UseCgroupFD {
		spec.CgroupFD = c.SysProcAttr.CgroupFD
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		return &SetupError{Step: "namespaces", Err: err}
	}
	defer null.Close()
	for i, f := range []*os.File{null, c.Stdout.(*os.File), c.Stderr.(*os.File), c.ExtraFiles[0], c.ExtraFiles[1]} {
		spec.Files[i] = int(f.Fd())
	}
	h.spawning, err = linux.StartSpawn(spec)
	if errors.Is(err, linux.ErrNoSpawner) {
		if err := c.Start(); err != nil {
			return &SetupError{Step: "namespaces", Err: fmt.Errorf("start helper in new namespaces: %w", err)}
		}
		h.cmd = &helperProc{Process: c.Process}
		return nil
	}
	if err != nil {
		return &SetupError{Step: "namespaces", Err: err}
	}
	return nil
}

// awaitSpawn waits for the spawner startSpawn started to clone the
// helper, which it releases to stage 2 at once (HelperSpawn.Release):
// its stage 2 starts while the supervisor prepares the run. A no-op
// for a helper started otherwise, or already waited for.
func (h *helper) awaitSpawn() error {
	sp := h.spawning
	if sp == nil {
		return nil
	}
	h.spawning = nil
	s, err := sp.Wait()
	if err != nil {
		return &SetupError{Step: "namespaces", Err: err}
	}
	// A pidfd (os.FindProcess opens one): Signal and Wait cannot reach
	// another process that took the pid. Until this process reaps it,
	// the pid is the helper's.
	proc, err := os.FindProcess(s.Pid)
	if err != nil {
		_ = syscall.Kill(s.Pid, syscall.SIGKILL)
		linux.Reap(s.Pid)
		return &SetupError{Step: "namespaces", Err: err}
	}
	h.cmd = &helperProc{Process: proc, spawned: true}
	return nil
}

// helperProc is the helper's process, started by the spawner or by
// exec.Cmd: Wait as exec.Cmd's (its descriptors are the caller's).
type helperProc struct {
	Process      *os.Process
	ProcessState *os.ProcessState
	spawned      bool // by the spawner, not exec.Cmd
}

// Wait waits for the helper; an exit other than 0 is an *exec.ExitError.
func (c *helperProc) Wait() error {
	if c.ProcessState != nil {
		return errors.New("sandbox: helper waited for twice")
	}
	state, err := c.Process.Wait()
	if err != nil {
		return err
	}
	c.ProcessState = state
	if !state.Success() {
		return &exec.ExitError{ProcessState: state}
	}
	return nil
}

// usable reports whether a warm helper can still take a run: it is alive,
// and the supervisor's mount table has not changed since the clone, so
// the copy the helper's view is built from is the one a helper cloned
// now would get (an unmount on the host after the clone must not stay
// mounted in the sandbox).
func (h *helper) usable() bool {
	var si unix.Siginfo
	// WNOWAIT: a helper that has exited stays for Wait (of discard).
	if err := unix.Waitid(unix.P_PID, h.cmd.Process.Pid, &si, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil); err != nil || si.Signo != 0 {
		return false
	}
	pfd := []unix.PollFd{{Fd: int32(h.mounts), Events: unix.POLLPRI}}
	n, err := unix.Poll(pfd, 0)
	return err == nil && n == 0
}

func (h *helper) closeMounts() {
	if h.mounts >= 0 {
		unix.Close(h.mounts)
		h.mounts = -1
	}
}

// send hands the helper its run: the config, whose Handoff names where
// the helper puts each descriptor (stdin, when not nil, to 0; files from
// helperFDs on, in order), then EOF. cfg is the caller's copy.
func (h *helper) send(cfg linux.Config, stdin *os.File, files []*os.File) error {
	var fds []int
	if stdin != nil {
		cfg.Handoff = append(cfg.Handoff, 0)
		fds = append(fds, int(stdin.Fd()))
	}
	for i, f := range files {
		cfg.Handoff = append(cfg.Handoff, helperFDs+i)
		fds = append(fds, int(f.Fd()))
	}
	if h.cg != nil && len(h.cg.TaskFiles()) > 0 {
		cfg.JoinCgroup = h.cg.TaskFiles()
	}
	data := linux.EncodeConfig(&cfg)
	defer h.conf.Close()
	sc, err := h.conf.SyscallConn()
	if err != nil {
		return &SetupError{Step: "send config", Err: err}
	}
	var werr error
	if cerr := sc.Control(func(fd uintptr) { werr = sendAll(int(fd), data, fds) }); cerr != nil {
		werr = cerr
	}
	if werr != nil {
		return &SetupError{Step: "send config", Err: werr}
	}
	return nil
}

// sendAll writes data on a stream socket, the descriptors riding on its
// first byte.
func sendAll(fd int, data []byte, fds []int) error {
	rights := unix.UnixRights(fds...)
	if len(fds) == 0 {
		rights = nil
	}
	for len(data) > 0 {
		n, err := unix.SendmsgN(fd, data, rights, nil, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		data, rights = data[n:], nil
	}
	return nil
}

// discard ends a helper that will take no run (or whose run failed before
// send): kills it by its pid, reaps it and removes its cgroup.
func (h *helper) discard() {
	_ = h.awaitSpawn()
	if h.cmd != nil {
		_ = h.cmd.Process.Signal(syscall.SIGKILL)
		_ = h.cmd.Wait()
	}
	_ = h.cgroupMade()
	for _, f := range []*os.File{h.conf, h.errR, h.outR[0], h.outR[1]} {
		if f != nil {
			f.Close()
		}
	}
	h.closeMounts()
	if h.cg != nil {
		_ = h.cg.Destroy()
	}
}

// warmSlot is the Executor's one warm helper, or its clone under way.
type warmSlot struct {
	done chan struct{} // closed once h or err is set
	h    *helper
	err  error
}

// startWarm clones a helper in the background.
func startWarm(spec helperSpec) *warmSlot {
	s := &warmSlot{done: make(chan struct{})}
	go func() {
		s.h, s.err = newHelper(spec)
		close(s.done)
	}()
	return s
}

// cloneWarm starts cloning a helper on the calling goroutine and
// returns the second half, which waits for the clone: New's helper for
// the first run, whose spawner clones it while the rest of the host
// probe runs between the two. The helper's exec and Go start, the
// longest stretch of a run's start, then begin as soon as the probe is
// done, where a goroutine of its own would first wait for a thread and
// a CPU (up to 1 ms on a busy machine) and leave the supervisor waiting
// for it in takeHelper (docs/BENCHMARKS.md).
func cloneWarm(spec helperSpec) (finish func() *warmSlot) {
	h, err := startHelper(spec)
	return func() *warmSlot {
		if err == nil {
			if err = h.finishStart(spec); err != nil {
				h.discard()
				h = nil
			}
		}
		s := &warmSlot{done: make(chan struct{}), h: h, err: err}
		close(s.done)
		return s
	}
}

// discard waits for the clone and ends the helper.
func (s *warmSlot) discard() {
	<-s.done
	if s.h != nil {
		s.h.discard()
	}
}

// warmUp clones the helper for the Executor's next run in the background,
// unless one is warm already or the Executor is closed.
func (e *Executor) warmUp() {
	e.warmMu.Lock()
	defer e.warmMu.Unlock()
	if e.closed || e.warm != nil {
		return
	}
	e.warm = startWarm(e.spec)
}

// takeHelper takes the warm helper, waiting for its clone if that is
// still under way (waited says how long). It returns nil when there is none or it cannot be
// used (it died, or the mount table changed since its clone): the caller
// clones a fresh one.
func (e *Executor) takeHelper() (h *helper, waited time.Duration) {
	e.warmMu.Lock()
	s := e.warm
	e.warm = nil
	e.warmMu.Unlock()
	if s == nil {
		return nil, 0
	}
	begin := time.Now()
	<-s.done
	waited = time.Since(begin)
	if s.err != nil {
		return nil, waited
	}
	if !s.h.usable() {
		s.h.discard()
		return nil, waited
	}
	return s.h, waited
}

// Close ends the Executor's warm helper, if any, and its cgroup. Runs
// still going are not affected; a run prepared after Close clones its
// own helper. Close is safe to call more than once.
func (e *Executor) Close() error {
	e.warmMu.Lock()
	e.closed = true
	s := e.warm
	e.warm = nil
	e.warmMu.Unlock()
	if s != nil {
		s.discard()
	}
	return nil
}

// stdinFile is the descriptor the helper gets as the command's stdin:
// nil for none (the helper's /dev/null), the file itself, or the read end
// of a pipe fed from r, which the caller closes once it is sent (own).
func stdinFile(r io.Reader) (f *os.File, own bool, err error) {
	switch r := r.(type) {
	case nil:
		return nil, false, nil
	case *os.File:
		if r == nil {
			return nil, false, nil
		}
		return r, false, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, false, err
	}
	// As exec.Cmd's own copier: it ends at r's EOF or once nothing of
	// the run holds the read end (EPIPE).
	go func() {
		_, _ = io.Copy(pw, r)
		pw.Close()
	}()
	return pr, true, nil
}
