package linux

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// The system paths, as a root supervisor shows them: id-mapped so that
// nothing on them is owned by uid or gid 0. A command run by root (with
// no capabilities, as every command) then reads a system file only if
// its mode lets every user read it: /etc/docker/key.json, a WireGuard
// key, an ssh host key, are refused for what they are (not world
// readable), whatever their names, exactly as for an unprivileged user.
// Only a process with CAP_SYS_ADMIN in the initial user namespace may
// id-map a host filesystem's mount, so the supervisor makes these trees
// and the helper moves them into its view (Mount.TreeFD).

// IDMapHolderArg0 is argv[0] of the short-lived process whose user
// namespace carries the mapping: it waits on stdin and exits.
const IDMapHolderArg0 = "airlock-idmap-holder"

func runIDMapHolder() {
	var b [1]byte
	os.Stdin.Read(b[:])
	os.Exit(0)
}

// nobody is the id root's files show as (the overflow id of most
// systems); every other id shows as itself.
const nobody = 65534

// rootlessMap maps every id to itself but 0, which becomes nobody (and
// nobody itself, which would overlap, is left unmapped: the kernel shows
// it as the overflow id, nobody again).
func rootlessMap() []syscall.SysProcIDMap {
	return []syscall.SysProcIDMap{
		{ContainerID: 0, HostID: nobody, Size: 1},
		{ContainerID: 1, HostID: 1, Size: nobody - 1},
		{ContainerID: nobody + 1, HostID: nobody + 1, Size: 1<<32 - 2 - (nobody + 1)},
	}
}

// NewRootlessUserns returns a user namespace (a descriptor of it) whose
// mapping turns uid and gid 0 into nobody, to id-map mounts with. It uses
// syscall.ForkExec, not os/exec: os/exec brings path/filepath into this
// package, which would delay the stage-2 init hook (see netaddr.go).
func NewRootlessUserns() (int, error) {
	// The small holder (idmapholder.go) copies nothing of this process.
	if fd, err := smallHolderUserns(); err == nil {
		return fd, nil
	}
	// The namespace only needs a process in it while it is opened: a
	// traced child stops at its exec before it runs an instruction, so
	// no Go runtime starts for it. Where ptrace is refused (Yama's
	// ptrace_scope 3, a seccomp policy) the holder runs and waits on
	// stdin instead.
	if fd, err := rootlessUserns(true); err == nil {
		return fd, nil
	}
	return rootlessUserns(false)
}

func rootlessUserns(traced bool) (int, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return -1, err
	}
	defer r.Close()
	defer w.Close()
	// Untraced, the holder runs: cat(1) waiting on the pipe is the
	// cheapest (this binary's runtime takes milliseconds to start), and
	// this binary is the fallback. Traced, it never runs an instruction.
	path, args := "/proc/self/exe", []string{IDMapHolderArg0}
	for _, cat := range []string{"/usr/bin/cat", "/bin/cat"} {
		if !traced && unix.Access(cat, unix.X_OK) == nil {
			path, args = cat, []string{"cat"}
			break
		}
	}
	pid, err := syscall.ForkExec(path, args, &syscall.ProcAttr{
		Env:   []string{"GOMAXPROCS=1"},
		Files: []uintptr{r.Fd(), ^uintptr(0), ^uintptr(0)},
		Sys: &syscall.SysProcAttr{
			Cloneflags:  unix.CLONE_NEWUSER,
			UidMappings: rootlessMap(),
			GidMappings: rootlessMap(),
			Pdeathsig:   syscall.SIGKILL,
			Ptrace:      traced,
		},
	})
	if err != nil {
		return -1, fmt.Errorf("start a process in a user namespace for the id mapping: %w", err)
	}
	fd, err := unix.Open(fmt.Sprintf("/proc/%d/ns/user", pid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if traced {
		// Stopped at its exec, it ends only by SIGKILL.
		syscall.Kill(pid, syscall.SIGKILL)
	}
	// Its stdin at end of file, an untraced holder exits.
	w.Close()
	reap(pid)
	if err != nil {
		return -1, fmt.Errorf("open the id mapping's user namespace: %w", err)
	}
	return fd, nil
}

// IDMappedTree clones the mount tree at source, detached, id-mapped
// through userns and with m's flags (read-only, nosuid, noexec), for the
// helper to move into its view.
func IDMappedTree(source string, userns int, m Mount) (int, error) {
	fd, err := unix.OpenTree(unix.AT_FDCWD, source, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
	if err != nil {
		return -1, err
	}
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP | unix.MOUNT_ATTR_NOSUID, Userns_fd: uint64(userns)}
	if m.ReadOnly {
		attr.Attr_set |= unix.MOUNT_ATTR_RDONLY
	}
	if m.NoExec {
		attr.Attr_set |= unix.MOUNT_ATTR_NOEXEC
	}
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("id-map %s: %w", source, err)
	}
	return fd, nil
}
