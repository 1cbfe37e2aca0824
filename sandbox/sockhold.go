package sandbox

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/sandbox/internal/linux"
)

// Releasing the host sockets the run no longer holds.
//
// The broker keeps a copy of every host socket it hands the sandbox
// (sockdestroy.go), so that none is left to the kernel when the run
// ends. That copy must not change what the sandbox's own close does: a
// peer waits for the FIN of a program that closed its connection. So
// while the broker holds copies, it looks every holdScan at which
// sockets the run's processes still have open (/proc/PID/fd of every
// descendant of the sandbox's init), and a socket no process of the run
// has had open for unseenScans looks in a row is released as the last
// close would have: closed with a reset where the kernel would reset
// (SO_LINGER 0, unread data), closed where nothing would be left behind
// (already closed), and otherwise shut down in both directions, which
// sends the FIN after what is queued and resets a peer that still sends,
// as the kernel does for a closed socket; that copy is kept until the
// connection is over, so it is never an orphan and still ends with the
// run. What the sandbox can tell: its peers see
// the FIN up to about two looks (200 ms) after the close, and a close
// under SO_LINGER with a timeout returns at once.
//
// Two looks, because a socket on its way between two processes of the
// run (SCM_RIGHTS) is in no process's table for a moment. A process
// whose descriptors cannot be read (one that made itself non-dumpable)
// makes the look inconclusive, and nothing is released on it: its
// sockets end with the run.

// holdScan is the time between two looks at the run's descriptors.
const holdScan = 100 * time.Millisecond

// unseenScans is how many looks in a row must miss a socket before the
// broker releases it.
const unseenScans = 2

// maxShut bounds how many connections the command has closed that the
// broker keeps while they finish (a peer that never reads and never
// closes would keep each to the end of the run).
const maxShut = 1024

// holdCopies starts the look at the run's descriptors when the broker
// keeps its first copy of a host socket. Until then there is nothing to
// release, and a run that never connects (most commands) pays for no
// look: no thread waking every holdScan to read /proc. It runs in an
// answer, which close waits for before it waits for the look.
func (b *connectBroker) holdCopies() {
	if pid := b.holdPID.Load(); pid > 0 {
		b.holdOnce.Do(func() { b.startHolding(int(pid)) })
	}
}

// startHolding starts looking at the descriptors of the processes that
// descend from initPID, the sandbox's init, until the broker closes.
func (b *connectBroker) startHolding(initPID int) {
	b.holding.Add(1)
	go func() {
		defer b.holding.Done()
		for !b.stopped(holdScan) {
			b.releaseUnheld(initPID)
		}
	}()
}

// releaseUnheld takes one look and releases what no process of the run
// holds any more.
func (b *connectBroker) releaseUnheld(initPID int) {
	b.connsMu.Lock()
	held := 0
	for _, c := range b.conns {
		if c.fd >= 0 {
			held++
		}
	}
	b.connsMu.Unlock()
	if held == 0 {
		return
	}
	open, complete := runSockets(initPID)
	b.connsMu.Lock()
	defer b.connsMu.Unlock()
	for i := range b.conns {
		c := &b.conns[i]
		switch {
		case c.fd < 0:
		case c.shut:
			if tcpState(c.fd) == tcpClosed {
				unix.Close(c.fd)
				c.fd, c.released = -1, true
			}
		case open[c.ino] || !complete:
			c.unseen = 0
		default:
			c.unseen++
			if c.unseen < unseenScans {
				break
			}
			switch kept, done := releaseHostConn(c.fd); {
			case !kept:
				c.fd, c.released = -1, true
			case done:
				c.shut = true
			}
		}
	}
	// The command's open-files limit no longer bounds sockets it has
	// closed: past maxShut, the oldest are aborted.
	shut := 0
	for i := len(b.conns) - 1; i >= 0; i-- {
		if c := &b.conns[i]; c.shut {
			if shut++; shut > maxShut {
				abortHostConn(c.fd)
				c.fd, c.released = -1, true
			}
		}
	}
	// What is released is over: nothing is left to end.
	b.conns = slices.DeleteFunc(b.conns, func(c hostConn) bool { return c.released })
}

// TCP states (include/net/tcp_states.h).
const (
	tcpSynSent = 2
	tcpClosed  = 7
	tcpListen  = 10
)

func tcpState(fd int) uint8 {
	info, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
	if err != nil {
		return tcpClosed
	}
	return info.State
}

// releaseHostConn does what the sandbox's last close of the socket would
// have done, now that the broker's copy is the last one, with calls that
// end the connection even if a copy it missed lives on: a reset where the
// kernel's close would reset (SO_LINGER 0, unread data), by a disconnect
// (connect AF_UNSPEC), and otherwise a shutdown of both directions. It
// reports whether the copy is kept (until the connection is over) or
// closed; a socket still connecting is left for a later look.
func releaseHostConn(fd int) (kept, done bool) {
	l, lerr := unix.GetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER)
	unread, uerr := unix.IoctlGetInt(fd, unix.SIOCINQ)
	switch st := tcpState(fd); {
	case st == tcpSynSent:
		return true, false
	case st == tcpClosed || st == tcpListen:
	case lerr == nil && l.Onoff != 0 && l.Linger == 0, uerr != nil || unread > 0:
		rawConnect(fd, make([]byte, unix.SizeofSockaddrInet4)) // AF_UNSPEC: 0
	default:
		unix.Shutdown(fd, unix.SHUT_RDWR)
		return true, true
	}
	unix.Close(fd)
	return false, true
}

// runSockets returns the inodes of the sockets the processes descending
// from initPID (and it) have open, and whether every such process's
// descriptors could be read.
func runSockets(initPID int) (map[uint64]bool, bool) {
	open := map[uint64]bool{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return open, false
	}
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid := parentOf(pid); ppid > 0 {
			children[ppid] = append(children[ppid], pid)
		}
	}
	complete := true
	for queue := []int{initPID}; len(queue) > 0; queue = queue[1:] {
		pid := queue[0]
		queue = append(queue, children[pid]...)
		dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
		fds, err := os.ReadDir(dir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) && !airlockOwn(pid, initPID) {
				complete = false
			}
			continue
		}
		for _, fd := range fds {
			link, err := os.Readlink(dir + fd.Name())
			if err != nil {
				continue
			}
			if ino, ok := strings.CutPrefix(link, "socket:["); ok {
				if n, err := strconv.ParseUint(strings.TrimSuffix(ino, "]"), 10, 64); err == nil {
					open[n] = true
				}
			}
		}
	}
	return open, complete
}

// airlockOwn reports whether pid, whose descriptors cannot be read, is
// one of airlock's own processes in the sandbox, which hold none of the
// run's sockets and are not dumpable so that the command cannot reach
// into them: the init, and the guard proxy it started. A process of the
// command that poses as the proxy only gets its own connections released
// early, which it could do itself; a released socket never goes on
// without the broker's copy (releaseHostConn).
func airlockOwn(pid, initPID int) bool {
	if pid == initPID {
		return true
	}
	argv, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	arg0, _, _ := bytes.Cut(argv, []byte{0})
	return err == nil && parentOf(pid) == initPID && string(arg0) == linux.GuardProxyArg0
}

// parentOf reads a process's parent from /proc/PID/stat (the fourth
// field, after the command name, which may hold spaces and parentheses).
func parentOf(pid int) int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}
