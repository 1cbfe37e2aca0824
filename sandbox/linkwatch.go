package sandbox

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/profile"
)

// Hard links in the workspace, checked at open. A workspace file that is
// a hard link to a file elsewhere is the same inode under another name:
// a secret kept outside (~/.ssh/id_ed25519) would be readable through
// it, and a write through it would change a file outside (a local
// clone's objects, a pnpm or uv store). Which files have names outside
// can only be learnt by reading every name in the workspace, which costs
// a start in a node_modules hundreds of milliseconds; the secrets' side
// gives no names at all. So where the supervisor answers fanotify
// permission events, it judges each open in the workspace's mounts by
// the inode being opened, which costs the same whatever the workspace
// holds:
//
//	fstatx of the event's descriptor   a regular file with more than one link, born before the
//	                                   run (STATX_BTIME; without it, every one): it may have a
//	                                   name outside the workspace
//	no read bit for other users        a secret, judged as system paths are (its mode): refused
//	else, /proc/TID/syscall            the opening call's own flags, read from its registers,
//	                                   which cannot change while it waits: open for writing or
//	                                   with O_TRUNC → refused; for reading or exec → allowed
//
// A file born during the run has only names the run or the host made
// since, like any new file. The mode cannot be turned open meanwhile:
// the create guard refuses chmod and chown of such a file (GuardConfig.
// LinksBornBefore), and FAN_REPORT_TID names the thread whose registers
// hold the flags (openat2, whose flags are in memory, is ENOSYS in every
// sandbox; an open of an unknown kind counts as a write).
//
// An open costs a round trip to the supervisor. Where no path-based deny
// glob is watched (a rename could move an inode under a denied name), an
// inode the check settles (one link, or born during the run) gets an
// ignore mark for FAN_OPEN_PERM in the group, so its later opens are not
// asked about (at most maxSettled a run).
//
// This is stricter than the masks it replaces in one way: a file with
// all its links inside the workspace is judged the same, since nothing
// short of the walk tells the two apart. Without permission events (an
// unprivileged run) or without the create guard, the walk and the masks
// stay (mask.go), with their bound of maxSharedLinks read-only files.

// linkCheck is the hard-link check of one run.
type linkCheck struct {
	workspace string
	// bornAfter is when the run was compiled (Unix ns): an inode born
	// at or after it was made during the run.
	bornAfter int64
}

func newLinkCheck(ws string) *linkCheck {
	return &linkCheck{workspace: ws, bornAfter: time.Now().UnixNano()}
}

// maskOptions says what this executor's supervisor checks at the call.
func (e *Executor) maskOptions() maskOptions {
	h := e.host
	guard := h.UnixGuard && h.CreateGuard && !createGuardOff
	return maskOptions{linksAtOpen: h.FanotifyPerm && h.UserNamespaces && guard, socketsGuarded: h.UnixGuard}
}

// Reasons of the check's refusals.
const (
	linkSecretReason = "read refused: a hard link to a file not every user may read, which may have names outside the workspace (a secret kept elsewhere); airlock cannot tell, without reading the whole workspace, that all its names are here"
	linkWriteReason  = "write refused: a hard link to a file that may have names outside the workspace (a local clone's objects, a pnpm or uv store), where a write would change it too; copy it (cp --no-preserve=links) to change it here"
)

// refusal returns why the open of fd (at path in the view) by thread tid
// is refused, or "". settled reports an inode whose later opens need no
// check either: one with a single link, or born during the run (a link
// the run adds to it later has its other name in the view too, as the
// walk at the start would not have seen either).
func (c *linkCheck) refusal(fd, tid int, path string) (reason string, settled bool) {
	if c == nil || !profile.Within(c.workspace, path) {
		return "", false
	}
	var st unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_TYPE|unix.STATX_MODE|unix.STATX_NLINK|unix.STATX_BTIME, &st); err != nil {
		return "open refused: the supervisor could not stat it (" + err.Error() + ")", false
	}
	if !c.mayBeShared(&st) {
		return "", st.Mode&unix.S_IFMT == unix.S_IFREG
	}
	if st.Mode&0o004 == 0 {
		return linkSecretReason, false
	}
	if w, known := openWrites(tid); w || !known {
		return linkWriteReason, false
	}
	return "", false
}

// maxSettled bounds the inodes one run's watch stops asking about (each
// an inode mark, which holds the inode in memory until the run ends);
// past it, their opens are still checked, one round trip each.
const maxSettled = 16384

// mayBeShared reports whether st is of a file that may have a name
// outside the workspace.
func (c *linkCheck) mayBeShared(st *unix.Statx_t) bool {
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink <= 1 {
		return false
	}
	if st.Mask&unix.STATX_BTIME == 0 {
		return true
	}
	return st.Btime.Sec*1e9+int64(st.Btime.Nsec) < c.bornAfter
}

// openCall is where an opening syscall keeps its flags, or -1 for one
// that opens to read (exec).
type openCall map[int64]int

// openCalls are this architecture's calls that raise FAN_OPEN_PERM in a
// sandbox (openat2, open_by_handle_at, uselib, io_uring and the like are
// refused by its seccomp filter; other architectures' calls are killed).
var openCalls = map[string]openCall{
	"amd64": {2: 1, 257: 2, 85: -2, 59: -1, 322: -1}, // open, openat, creat, execve, execveat
	"arm64": {56: 2, 221: -1, 281: -1},               // openat, execve, execveat
}[runtime.GOARCH]

// How long openWrites waits for an opening thread to be seen asleep in
// its call: at most openWritesTries pauses (about 20 ms).
const (
	openWritesTries = 400
	openWritesPause = 50 * time.Microsecond
)

// openWrites reads the opening call of thread tid from /proc/TID/syscall
// (its number and arguments as it entered the kernel) and reports
// whether it opens for writing or truncates; known is false when the
// call could not be read or is not one of openCalls.
func openWrites(tid int) (write, known bool) {
	var f [][]byte
	for try := 0; ; try++ {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/syscall")
		if err != nil {
			return false, false
		}
		f = bytes.Fields(data)
		// "running": the kernel queues the permission event before the
		// opening thread goes to sleep waiting for the answer, so the
		// supervisor can read its registers before they are there to
		// read. The thread cannot get past the open without the answer,
		// so it soon shows the call; a thread that never does counts as
		// a write (refused).
		if len(f) == 1 && string(f[0]) == "running" && try < openWritesTries {
			time.Sleep(openWritesPause)
			continue
		}
		break
	}
	if len(f) < 7 {
		return false, false // still "running", or no syscall
	}
	nr, err := strconv.ParseInt(string(f[0]), 0, 64)
	if err != nil {
		return false, false
	}
	arg, ok := openCalls[nr]
	switch {
	case !ok:
		return false, false
	case arg == -1:
		return false, true
	case arg == -2:
		return true, true // creat: O_WRONLY|O_TRUNC
	}
	flags, err := strconv.ParseUint(string(f[1+arg]), 0, 64)
	if err != nil {
		return false, false
	}
	// The kernel reads open flags as an int.
	fl := int(int32(flags))
	return fl&unix.O_ACCMODE != unix.O_RDONLY || fl&unix.O_TRUNC != 0, true
}
