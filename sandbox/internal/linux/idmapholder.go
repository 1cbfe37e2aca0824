package linux

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// The id mapping's user namespace needs a process in it only while the
// supervisor opens it. Making one from this Go process costs a full
// fork: a child that enters a new user namespace at its clone must wait
// for its parent to write the namespace's maps, so Go forks without
// CLONE_VM, copying the supervisor's page tables, and every page the
// supervisor writes afterwards takes a copy-on-write fault (about 0.5 ms
// of CPU a run, with the exec and the exit of that copy; docs/
// BENCHMARKS.md). The small holder turns it around: a vfork (shared
// memory, nothing copied) execs a 73-byte program that enters a new user
// namespace itself (unshare), says so on its stdout, and waits on its
// stdin; the supervisor writes the maps from outside, as before, then
// opens the namespace and closes the stdin. The program's text is
// holderCode (idmapholder_amd64.go, with its assembly); it runs from a
// sealed memfd, so no file is written and nothing can change it between
// the write and the exec.

// errNoSmallHolder: this architecture has no small holder, or this host
// will not exec one (vm.memfd_noexec); the Go holders serve.
var errNoSmallHolder = errors.New("no small id-map holder here")

// holderELF is a static ELF executable of one read-and-execute segment:
// the ELF header, one program header, then code, loaded at holderBase.
func holderELF(machine uint16, code []byte) []byte {
	const (
		ehdrSize   = 64
		phdrSize   = 56
		holderBase = 0x400000
	)
	size := ehdrSize + phdrSize + len(code)
	b := make([]byte, size)
	le := binary.LittleEndian
	copy(b, "\x7fELF")
	b[4], b[5], b[6] = 2, 1, 1 // 64-bit, little-endian, ELF version 1
	le.PutUint16(b[16:], 2)    // ET_EXEC
	le.PutUint16(b[18:], machine)
	le.PutUint32(b[20:], 1)
	le.PutUint64(b[24:], holderBase+ehdrSize+phdrSize) // entry: the code
	le.PutUint64(b[32:], ehdrSize)                     // program headers
	le.PutUint16(b[52:], ehdrSize)
	le.PutUint16(b[54:], phdrSize)
	le.PutUint16(b[56:], 1)
	p := b[ehdrSize:]
	le.PutUint32(p[0:], 1)           // PT_LOAD
	le.PutUint32(p[4:], 5)           // PF_R | PF_X
	le.PutUint64(p[16:], holderBase) // the whole file, at the base
	le.PutUint64(p[24:], holderBase)
	le.PutUint64(p[32:], uint64(size))
	le.PutUint64(p[40:], uint64(size))
	le.PutUint64(p[48:], 0x1000)
	copy(b[ehdrSize+phdrSize:], code)
	return b
}

// holderFile returns a sealed, executable memfd holding the small
// holder.
func holderFile() (int, error) {
	if holderCode == nil {
		return -1, errNoSmallHolder
	}
	fd, err := sealedProgram("airlock-idmap-holder", holderMachine, holderCode)
	if err != nil {
		return -1, fmt.Errorf("%w: %w", errNoSmallHolder, err)
	}
	return fd, nil
}

// sealedProgram returns a sealed, executable memfd holding code as a
// static executable (holderELF).
func sealedProgram(name string, machine uint16, code []byte) (int, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|unix.MFD_EXEC)
	if errors.Is(err, unix.EINVAL) { // before Linux 6.3, every memfd may be executed
		fd, err = unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	}
	if err != nil {
		return -1, fmt.Errorf("memfd: %w", err)
	}
	elf := holderELF(machine, code)
	n, err := unix.Write(fd, elf)
	if err == nil && n != len(elf) {
		err = fmt.Errorf("short write (%d of %d bytes)", n, len(elf))
	}
	if err == nil {
		_, err = unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SEAL|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE)
	}
	if err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("write %s: %w", name, err)
	}
	return fd, nil
}

// smallHolderUserns is NewRootlessUserns by the small holder.
func smallHolderUserns() (int, error) {
	prog, err := holderFile()
	if err != nil {
		return -1, err
	}
	defer unix.Close(prog)
	// Raw pipes, not os.Pipe: the holder's ends need no poller, and
	// each *os.File would register with it and back (a dozen calls).
	var in, ready [2]int
	if err := unix.Pipe2(in[:], unix.O_CLOEXEC); err != nil {
		return -1, err
	}
	if err := unix.Pipe2(ready[:], unix.O_CLOEXEC); err != nil {
		unix.Close(in[0])
		unix.Close(in[1])
		return -1, err
	}
	defer unix.Close(ready[0])
	// No Cloneflags: the child is a vfork, and enters its namespace
	// after its exec. Pdeathsig survives the exec: a holder never
	// outlives its supervisor.
	pid, err := syscall.ForkExec("/proc/self/fd/"+strconv.Itoa(prog), []string{IDMapHolderArg0}, &syscall.ProcAttr{
		Env:   []string{},
		Files: []uintptr{uintptr(in[0]), uintptr(ready[1]), ^uintptr(0)},
		Sys:   &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	unix.Close(in[0])
	unix.Close(ready[1])
	if err != nil {
		unix.Close(in[1])
		return -1, fmt.Errorf("%w: exec: %w", errNoSmallHolder, err)
	}
	defer func() {
		// Its stdin at end of file, the holder exits.
		unix.Close(in[1])
		reap(pid)
	}()
	// The holder writes one byte once it is in its namespace; end of
	// file instead means unshare failed and it exited (status 1). Until
	// it is reaped its pid cannot be reused, so the /proc paths below are
	// this holder's.
	var b [1]byte
	n, err := unix.Read(ready[0], b[:])
	for err == unix.EINTR {
		n, err = unix.Read(ready[0], b[:])
	}
	if n != 1 {
		return -1, fmt.Errorf("%w: the holder could not enter a new user namespace", errNoSmallHolder)
	}
	if err := writeIDMaps(pid, rootlessMap()); err != nil {
		return -1, fmt.Errorf("write the id mapping's maps: %w", err)
	}
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/ns/user", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open the id mapping's user namespace: %w", err)
	}
	return fd, nil
}

// writeIDMaps gives pid's user namespace m as its uid and gid maps, with
// setgroups denied, as syscall.ForkExec does for UidMappings.
func writeIDMaps(pid int, m []syscall.SysProcIDMap) error {
	var lines []byte
	for _, e := range m {
		lines = fmt.Appendf(lines, "%d %d %d\n", e.ContainerID, e.HostID, e.Size)
	}
	return writeMaps(pid, lines, lines)
}

// writeMaps writes pid's uid_map, then "deny" to its setgroups, then its
// gid_map: the order the kernel needs (an unprivileged gid_map only
// after setgroups is denied).
func writeMaps(pid int, uidMap, gidMap []byte) error {
	dir := "/proc/" + strconv.Itoa(pid) + "/"
	for _, f := range []struct {
		name string
		data []byte
	}{{"uid_map", uidMap}, {"setgroups", []byte("deny")}, {"gid_map", gidMap}} {
		fd, err := unix.Open(dir+f.name, unix.O_WRONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		n, err := unix.Write(fd, f.data)
		unix.Close(fd)
		if err == nil && n != len(f.data) {
			err = fmt.Errorf("short write to %s", f.name)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	return nil
}

// reap waits for the child pid to end and returns its status.
func reap(pid int) syscall.WaitStatus {
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, unix.WALL, nil)
		if err != syscall.EINTR && (err != nil || ws.Exited() || ws.Signaled()) {
			return ws
		}
	}
}
