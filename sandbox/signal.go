package sandbox

import (
	"strconv"
	"syscall"
)

// The kernel delivers to a namespace's PID 1 only the signals it has a
// handler for (and SIGKILL and SIGSTOP, sent from outside). PID 1 of the
// sandbox is now its init (internal/linux/init.go), which handles every
// signal and forwards it to the command, so effectOf finds each one
// caught and delivers it; the emulation below remains for a PID 1
// without handlers.

// signalEffect is what sending a signal to the command comes to.
type signalEffect int

const (
	signalDeliver   signalEffect = iota // the command handles it, or the kernel forces it
	signalNothing                       // ignored, by the command or by default
	signalTerminate                     // the default action ends the process
	signalStop                          // the default action stops the process
)

// effectOf decides sig for the process pid from its signal dispositions
// in /proc (SigCgt: handled, SigIgn: ignored).
func effectOf(pid int, sig syscall.Signal) signalEffect {
	switch sig {
	case syscall.SIGKILL, syscall.SIGSTOP, syscall.SIGCONT:
		// Forced from outside the namespace; SIGCONT resumes a stopped
		// process whatever its disposition.
		return signalDeliver
	}
	caught, ignored, ok := dispositions(pid)
	if ok && sig >= 1 && sig <= 64 {
		bit := uint64(1) << (uint(sig) - 1)
		switch {
		case caught&bit != 0:
			return signalDeliver
		case ignored&bit != 0:
			return signalNothing
		}
	}
	switch sig {
	case syscall.SIGCHLD, syscall.SIGURG, syscall.SIGWINCH:
		return signalNothing
	case syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU:
		return signalStop
	}
	return signalTerminate
}

// dispositions reads the caught and ignored signal masks of pid.
func dispositions(pid int) (caught, ignored uint64, ok bool) {
	status, err := procFile(pid, "status")
	if err != nil {
		return 0, 0, false
	}
	cgt, ok1 := procField(status, "SigCgt")
	ign, ok2 := procField(status, "SigIgn")
	caught, err1 := strconv.ParseUint(cgt, 16, 64)
	ignored, err2 := strconv.ParseUint(ign, 16, 64)
	return caught, ignored, ok1 && ok2 && err1 == nil && err2 == nil
}
