// Package proctime tells when the running program started, so that a
// Report can account for a whole airlock process (its exec, the Go
// runtime's start and the package inits included), not only the part the
// sandbox library times. It owns nothing else.
//
// A program imports it for its side effect at init; importing only
// syscall and time, it is among the first packages Go initialises.
package proctime

import (
	"syscall"
	"time"
	"unsafe"
)

// atInit is taken when this package is initialised, before most of the
// program's packages; beforeInit estimates how long the process had
// existed by then.
var (
	atInit     = time.Now()
	beforeInit = sinceFork()
)

// Start is the estimated start of the process: its fork (for a program
// started by a shell or hyperfine, its exec follows within microseconds).
func Start() time.Time { return atInit.Add(-beforeInit) }

// BeforeInit is how long the process existed before this package was
// initialised: its exec, the Go runtime's start and the first package
// inits. It is a lower bound: the main thread's CPU time plus the time
// it waited for a CPU (schedstat's run_delay), which leave out any time
// it slept (a page fault that read the binary from disk). Zero if the
// kernel tells neither.
func BeforeInit() time.Duration { return beforeInit }

// Since is the time from Start to now.
func Since() time.Duration { return time.Since(Start()) }

// sinceFork reads the main thread's CPU time (clock_gettime, current to
// the nanosecond) and the time it waited on a run queue before it last
// got a CPU (/proc/thread-self/schedstat's second field). Package inits
// run on the main thread: the runtime locks it for them.
func sinceFork() time.Duration {
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	var ts syscall.Timespec
	if _, _, e := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano()) + runDelay()
}

// runDelay is the second field of /proc/thread-self/schedstat, in ns;
// 0 when it cannot be read (a kernel without CONFIG_SCHED_INFO).
func runDelay() time.Duration {
	fd, err := syscall.Open("/proc/thread-self/schedstat", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0
	}
	defer syscall.Close(fd)
	var buf [128]byte
	n, err := syscall.Read(fd, buf[:])
	if err != nil || n <= 0 {
		return 0
	}
	return time.Duration(field(buf[:n], 1))
}

// field returns the i-th space-separated decimal number of b, 0 if it
// has none or one that is not a number.
func field(b []byte, i int) int64 {
	var v int64
	in, seen := false, -1
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			if !in {
				in, seen, v = true, seen+1, 0
			}
			if seen == i {
				v = v*10 + int64(c-'0')
			}
		case c == ' ' || c == '\n':
			if in && seen == i {
				return v
			}
			in = false
		default:
			return 0
		}
	}
	if in && seen == i {
		return v
	}
	return 0
}
