package sandbox

import (
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// The stage-2 helper stays as the sandbox's init and runs the command as
// its child (sandbox/internal/linux/init.go). A PID 1 cannot die of a
// signal it sends itself, so when the command dies of one the init says
// so on a pipe of its own ("signal N") and exits 128+N; initStatus turns
// that back into the Result's Signal.

// initProcesses is the share of the pids budget of the init and the
// create guard's proxy (createguard.go): the budget is the command's, so
// the limits the kernel holds are two higher.
const initProcesses = 2

// withInit is a pids budget with the init added; 0 (no budget) stays 0.
func withInit(pids int) int {
	if pids == 0 {
		return 0
	}
	return pids + initProcesses
}

// openInitStatus makes the pipe: r stays with the supervisor, w goes to
// the helper.
func openInitStatus() (r, w *os.File, err error) {
	return os.Pipe()
}

// applyInitStatus reads what the init reported, after it has exited, and
// records a death by signal in res. Nothing on the pipe (the command
// exited, or the whole run was killed) leaves res as Wait made it.
func applyInitStatus(r *os.File, res *Result) {
	if r == nil {
		return
	}
	defer r.Close()
	msg, _ := io.ReadAll(io.LimitReader(r, 64))
	n, err := strconv.Atoi(strings.TrimPrefix(string(msg), "signal "))
	if err != nil || n <= 0 || n > 64 || res.Signal != "" {
		return
	}
	res.Signal = syscall.Signal(n).String()
	res.ExitCode = -1
}
