package sandbox

import (
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Receiving the notifier's stops.
//
// A stopped call waits killable only once the supervisor has received it
// (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, seccomp.InstallNotifier).
// Until then the kernel waits interruptibly (kernel/seccomp.c,
// seccomp_do_user_notification: should_sleep_killable is true only in
// state SENT), and a signal the program handles without SA_RESTART (a
// shell's trap) makes the call fail with EINTR, where it would have
// succeeded without airlock. Nothing can close that window from user
// space: a signal already pending when the call enters the kernel ends
// the wait before any supervisor could take the stop. What the
// supervisor can do is keep the window as short as the kernel allows:
//
//   - several threads, each locked to its OS thread, wait in
//     SECCOMP_IOCTL_NOTIF_RECV itself, not in poll: the kernel hands a
//     new stop to a waiting receiver and marks it SENT without a return
//     to user space or a pass through the Go scheduler;
//   - SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (Linux 6.6) wakes the receiver
//     on the caller's CPU, which the caller leaves at once to wait;
//   - where the supervisor may (root, or an RLIMIT_RTPRIO above 0), the
//     receivers are real-time threads (SCHED_FIFO): on a loaded host the
//     wait for the CPU is most of the window, and a woken real-time
//     thread runs before every ordinary task there. A receiver only
//     waits in the kernel and hands a stop on, so it never holds a CPU
//     for long.
//
// Measured with TestAttackSignalDuringCreate's flood (a dash trap under
// a non-stop SIGUSR1, 3,000 writes, on 2 loaded cores): about 14% of the
// writes failed with poll and one receiving goroutine, and as many with
// receivers at an ordinary priority; about 0.6% with real-time
// receivers. docs/PROFILES.md states the rest.
//
// More than one receiver: while one hands its stop on, the next call
// (another thread's) finds another already waiting.
const receivers = 2

// raisePriority makes the calling thread a real-time one at the lowest
// real-time priority, or where it may not, tries nice -20; where neither
// is allowed it stays as it is. restore puts the thread back as it was. A thread it clones would not inherit
// the class (SCHED_RESET_ON_FORK; the Go runtime starts new threads from
// a thread of its own for a locked one anyway).
func raisePriority() (restore func()) {
	param := struct{ priority int32 }{1}
	_, _, errno := unix.RawSyscall(unix.SYS_SCHED_SETSCHEDULER, 0, unix.SCHED_FIFO|unix.SCHED_RESET_ON_FORK, uintptr(unsafe.Pointer(&param)))
	if errno == 0 {
		return func() {
			// Back to the ordinary class: lowering is always allowed.
			param := struct{ priority int32 }{0}
			unix.RawSyscall(unix.SYS_SCHED_SETSCHEDULER, 0, 0 /* SCHED_OTHER */, uintptr(unsafe.Pointer(&param)))
		}
	}
	// getpriority(2)'s raw value is 20 - nice; PRIO_PROCESS with 0 is the
	// calling thread on Linux.
	was, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	if err != nil || unix.Setpriority(unix.PRIO_PROCESS, 0, -20) != nil {
		return func() {}
	}
	return func() { unix.Setpriority(unix.PRIO_PROCESS, 0, 20-was) }
}

// receiveWait bounds how long close waits for the receivers, which wake
// when the last process under the filter is gone (the kernel's orphan
// wake-up): a run's end has already waited for every process, so only
// a process that outlives its run would make them wait longer.
const receiveWait = 5 * time.Second

// startReceivers starts the receiving threads; each serves its own copy
// of the listener, which it closes when it ends, so that a receiver left
// waiting after close never meets a reused descriptor number.
func (b *connectBroker) startReceivers() error {
	var fds []int
	for range receivers {
		fd, err := unix.FcntlInt(uintptr(b.listener), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			for _, fd := range fds {
				unix.Close(fd)
			}
			return err
		}
		fds = append(fds, fd)
	}
	for _, fd := range fds {
		b.receiving.Add(1)
		go b.receive(fd)
	}
	return nil
}

// receive takes stops off fd until no process is left under the filter
// or the broker closes, and hands each to its own goroutine.
func (b *connectBroker) receive(fd int) {
	defer b.receiving.Done()
	defer unix.Close(fd)
	// The thread goes back to the runtime as it came, unlocked: a locked
	// goroutine that returns ends its thread, and a run's helper forked
	// from that thread earlier (Pdeathsig is per thread) would get its
	// SIGKILL, ending another run that is still going.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer raisePriority()()
	for {
		n := new(seccompNotif)
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(unix.SECCOMP_IOCTL_NOTIF_RECV), uintptr(unsafe.Pointer(n)))
		switch errno {
		case 0:
		case unix.EINTR:
			continue
		case unix.ENOENT:
			// The stop's caller was interrupted or killed before it was
			// taken; or no process is left (the filter's users are
			// gone and RECV no longer waits).
			if hungUp(fd) {
				return
			}
			continue
		default:
			return
		}
		if !b.dispatch(n) {
			resp := seccompNotifResp{id: n.id, error: -int32(unix.ENOSYS)}
			unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(unix.SECCOMP_IOCTL_NOTIF_SEND), uintptr(unsafe.Pointer(&resp)))
			return
		}
	}
}

// hungUp reports whether the listener fd has no process left to stop.
func hungUp(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0
}

// dispatch answers n on a goroutine of its own, unless the broker is
// closing; it reports whether it took n.
func (b *connectBroker) dispatch(n *seccompNotif) bool {
	b.closeMu.Lock()
	defer b.closeMu.Unlock()
	if b.closing {
		return false
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer func() {
			// A bug here must not take the supervisor, and with it the
			// run, down: the call fails instead.
			if recover() != nil {
				resp := seccompNotifResp{id: n.id, error: -int32(unix.ECONNABORTED)}
				b.ioctl(unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
			}
		}()
		b.answer(n)
	}()
	return true
}

// stopReceiving makes the receivers take no more stops, waits for the
// answers under way, and then, up to receiveWait, for the receivers.
func (b *connectBroker) stopReceiving() {
	b.closeMu.Lock()
	b.closing = true
	b.closeMu.Unlock()
	b.wg.Wait()
	done := make(chan struct{})
	go func() { b.receiving.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(receiveWait):
	}
}
