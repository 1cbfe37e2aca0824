package linux

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// The stage-2 helper enters new namespaces, its user namespace among
// them, at its clone. Cloned by Go (exec.Cmd with Cloneflags and
// UidMappings) it is a full fork of the supervisor: the child waits for
// its maps, so Go cannot use CLONE_VFORK|CLONE_VM, the kernel copies the
// supervisor's page tables and the supervisor, working on meanwhile,
// takes a copy-on-write fault on every page it writes. The spawner turns
// that around as the small id-map holder does (idmapholder.go): a vfork
// execs a small program from a sealed memfd (spawnCode), which clones
// the helper with clone3 and CLONE_PARENT, so the helper is the
// supervisor's own child (waitable, its PDEATHSIG relative to the
// supervisor's thread, as with exec.Cmd), says its pid on a pipe and
// exits. The helper's side waits for the maps, which the supervisor
// writes from outside as Go did, sets up as Go's forkExec did for
// exec.Cmd (Setsid, Pdeathsig, AmbientCaps) and execs the airlock binary
// as Stage2Arg0.
//
// A helper whose supervisor died before its PR_SET_PDEATHSIG was set is
// not signalled; it finds out from the go pipe, whose only write end was
// the supervisor's: end of file, and it exits. (getppid cannot tell: the
// helper is pid 1 of its own pid namespace, its parent outside it is 0.)
//
// CLONE_PARENT with CLONE_NEWUSER and CLONE_NEWPID: copy_process refuses
// CLONE_PARENT only from an init (SIGNAL_UNKILLABLE) and clone3 only
// with a nonzero exit_signal (the child takes the spawner's, SIGCHLD).

// ErrNoSpawner: this architecture has no helper spawner, or this host
// will not exec one; the caller clones the helper with exec.Cmd.
var ErrNoSpawner = errors.New("no helper spawner here")

// HelperSpawn is what SpawnHelper needs.
type HelperSpawn struct {
	Flags uint64 // the CLONE_NEW* flags
	// Files are the helper's descriptors 0 to 4.
	Files [5]int
	// CgroupFD, when not negative, is the cgroup v2 directory the
	// helper is cloned into (CLONE_INTO_CGROUP).
	CgroupFD int
	UID, GID int // mapped to themselves, setgroups denied
	// Release has SpawnHelper write the maps and let the helper go on
	// as soon as the spawner says its pid, before it reaps the spawner:
	// the helper's exec and Go start then begin a wake-up and a wait
	// sooner. Without it the caller calls Spawned.Release (or Abandon).
	Release bool
}

// The helper's exit statuses for the steps before its exec of stage 2
// (spawnCode), and the spawner's own.
var spawnSteps = map[int]string{
	2:  "read the clone arguments",
	3:  "clone3",
	10: "set the parent-death signal",
	11: "wait for the id maps",
	12: "setsid",
	13: "capget",
	14: "capset",
	15: "raise the ambient capabilities",
	16: "mark descriptors close-on-exec",
	17: "exec stage 2",
}

// SpawnStep names the step a helper that exited with status code before
// running stage 2 failed at, or "".
func SpawnStep(code int) string { return spawnSteps[code] }

// spawnerFDs is the number of descriptors the spawner is given.
const spawnerFDs = 9

var spawner struct {
	once sync.Once
	prog int // the sealed memfd
	exe  int // the airlock binary, for the helper's execveat
	err  error
}

func spawnerFiles() (prog, exe int, err error) {
	spawner.once.Do(func() {
		if spawnCode == nil {
			spawner.err = ErrNoSpawner
			return
		}
		if spawner.exe, spawner.err = unix.Open("/proc/self/exe", unix.O_RDONLY|unix.O_CLOEXEC, 0); spawner.err != nil {
			spawner.err = fmt.Errorf("%w: open /proc/self/exe: %w", ErrNoSpawner, spawner.err)
			return
		}
		prog, err := sealedProgram("airlock-helper-spawner", spawnMachine, spawnCode)
		if err == nil {
			// Above the spawner's descriptors 0 to 8: the exec of
			// /proc/self/fd/N comes after ForkExec has set those up, and
			// a low N would by then name one of them.
			spawner.prog, err = unix.FcntlInt(uintptr(prog), unix.F_DUPFD_CLOEXEC, spawnerFDs)
			unix.Close(prog)
		}
		if err != nil {
			unix.Close(spawner.exe)
			spawner.err = fmt.Errorf("%w: %w", ErrNoSpawner, err)
		}
	})
	return spawner.prog, spawner.exe, spawner.err
}

// Spawned is a helper cloned by SpawnHelper, blocked before its maps.
type Spawned struct {
	Pid int
	goW int // the go pipe's write end
}

// SpawnHelper clones a helper by the spawner, up to the point where it
// waits for its maps (Release), or, with HelperSpawn.Release, past it.
// ErrNoSpawner (wrapped) means nothing was started and the caller may
// clone it another way; on any other error nothing is left either.
func SpawnHelper(s HelperSpawn) (*Spawned, error) {
	sp, err := StartSpawn(s)
	if err != nil {
		return nil, err
	}
	return sp.Wait()
}

// Spawning is a spawner started by StartSpawn, cloning the helper.
type Spawning struct {
	s    HelperSpawn
	tpid int // the spawner
	pidR int // the pid pipe's read end
	goW  int // the go pipe's write end
}

// StartSpawn is the first half of SpawnHelper: it execs the spawner,
// which clones the helper while the caller does other work, and returns.
// Wait, which the caller must call, is the second half. ErrNoSpawner
// (wrapped) means nothing was started; on any other error nothing is
// left either.
func StartSpawn(s HelperSpawn) (*Spawning, error) {
	prog, exe, err := spawnerFiles()
	if err != nil {
		return nil, err
	}
	var pidP, goP [2]int
	if err := unix.Pipe2(pidP[:], unix.O_CLOEXEC); err != nil {
		return nil, fmt.Errorf("pid pipe: %w", err)
	}
	if err := unix.Pipe2(goP[:], unix.O_CLOEXEC); err != nil {
		unix.Close(pidP[0])
		unix.Close(pidP[1])
		return nil, fmt.Errorf("go pipe: %w", err)
	}
	// The spawner's ends are its own once it runs; the supervisor keeps
	// the pid pipe's read end and the go pipe's write end (Wait).
	defer unix.Close(pidP[1])
	defer unix.Close(goP[0])
	fail := func(err error) (*Spawning, error) {
		unix.Close(pidP[0])
		unix.Close(goP[1])
		return nil, err
	}
	flags := s.Flags | unix.CLONE_PARENT
	cg := ^uintptr(0)
	var args [88]byte
	if s.CgroupFD >= 0 {
		flags |= unix.CLONE_INTO_CGROUP
		cg = uintptr(s.CgroupFD)
		binary.LittleEndian.PutUint64(args[80:], 8) // the spawner's descriptor 8
	}
	binary.LittleEndian.PutUint64(args[0:], flags)
	// exit_signal (args[32:]) stays 0, as clone3 wants with CLONE_PARENT.
	// A write of at most PIPE_BUF bytes is whole: the spawner reads it.
	if n, err := unix.Write(goP[1], args[:]); err != nil || n != len(args) {
		return fail(fmt.Errorf("write the clone arguments: %d bytes, %v", n, err))
	}
	files := []uintptr{uintptr(s.Files[0]), uintptr(s.Files[1]), uintptr(s.Files[2]), uintptr(s.Files[3]), uintptr(s.Files[4]),
		uintptr(exe), uintptr(pidP[1]), uintptr(goP[0]), cg}
	// No Cloneflags: a vfork.
	tpid, err := syscall.ForkExec("/proc/self/fd/"+strconv.Itoa(prog), []string{"airlock-helper-spawner"}, &syscall.ProcAttr{
		Env: []string{}, Files: files,
	})
	if err != nil {
		return fail(fmt.Errorf("%w: exec: %w", ErrNoSpawner, err))
	}
	return &Spawning{s: s, tpid: tpid, pidR: pidP[0], goW: goP[1]}, nil
}

// Wait waits for the spawner's word on the helper's clone and reaps the
// spawner: it returns the helper, released with HelperSpawn.Release, or
// why there is none (nothing is left then).
func (sp *Spawning) Wait() (*Spawned, error) {
	s := sp.s
	closeGo := true
	defer func() {
		unix.Close(sp.pidR)
		if closeGo {
			unix.Close(sp.goW)
		}
	}()
	var b [4]byte
	n, err := unix.Read(sp.pidR, b[:])
	for err == unix.EINTR {
		n, err = unix.Read(sp.pidR, b[:])
	}
	pid := int(int32(binary.LittleEndian.Uint32(b[:])))
	var relErr error
	if n == 4 && pid > 0 && s.Release {
		closeGo = false
		relErr = (&Spawned{Pid: pid, goW: sp.goW}).Release(s.UID, s.GID)
	}
	status := reap(sp.tpid)
	if n != 4 {
		if status.Signaled() {
			return nil, fmt.Errorf("the helper spawner was killed by %v", status.Signal())
		}
		return nil, fmt.Errorf("the helper spawner exited with status %d at %s", status.ExitStatus(), orUnknown(SpawnStep(status.ExitStatus())))
	}
	if pid <= 0 {
		return nil, fmt.Errorf("clone3 the helper in new namespaces: %w", syscall.Errno(-pid))
	}
	if relErr != nil {
		// This process's own child, not reaped: its pid is still its.
		_ = unix.Kill(pid, unix.SIGKILL)
		reap(pid)
		return nil, relErr
	}
	if s.Release {
		return &Spawned{Pid: pid, goW: -1}, nil
	}
	closeGo = false
	return &Spawned{Pid: pid, goW: sp.goW}, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "an unknown step"
	}
	return s
}

// Release writes the helper's maps and lets it go on to stage 2. It
// fails if the helper died before; either way the caller waits for it.
func (s *Spawned) Release(uid, gid int) error {
	defer unix.Close(s.goW)
	if err := writeOwnIDMaps(s.Pid, uid, gid); err != nil {
		return fmt.Errorf("write the helper's id maps: %w", err)
	}
	if _, err := unix.Write(s.goW, []byte{1}); err != nil {
		return fmt.Errorf("release the helper: %w", err)
	}
	return nil
}

// Abandon closes the go pipe without the maps: the helper exits (11).
func (s *Spawned) Abandon() { unix.Close(s.goW) }

// writeOwnIDMaps maps uid and gid in pid's user namespace to
// themselves, as UidMappings and GidMappings of one entry did.
func writeOwnIDMaps(pid, uid, gid int) error {
	return writeMaps(pid, []byte(strconv.Itoa(uid)+" "+strconv.Itoa(uid)+" 1\n"), []byte(strconv.Itoa(gid)+" "+strconv.Itoa(gid)+" 1\n"))
}

// Reap waits for the child pid to end.
func Reap(pid int) { reap(pid) }
