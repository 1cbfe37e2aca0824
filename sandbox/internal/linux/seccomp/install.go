//go:build linux

package seccomp

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Install puts p on every thread of the calling process, for the rest of its
// life and across execve; it cannot be removed. It is meant for the sandbox's
// stage-2 helper right before it execs the command.
//
// The caller must already have called prctl(PR_SET_NO_NEW_PRIVS, 1); Install
// checks and fails rather than lean on CAP_SYS_ADMIN. Install uses
// SECCOMP_FILTER_FLAG_TSYNC so that threads the Go runtime started get the
// filter too, and fails if any of them cannot. Every error says which step
// failed and starts with "seccomp: install filter:".
func Install(p Program) error {
	if p.Arch != runtime.GOARCH {
		// The filter would kill the process at its next syscall.
		return fmt.Errorf("seccomp: install filter: program is for %s, this process is %s", p.Arch, runtime.GOARCH)
	}
	if err := validate(p.Filter); err != nil {
		return fmt.Errorf("seccomp: install filter: invalid program: %w", err)
	}
	nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	if err != nil {
		return fmt.Errorf("seccomp: install filter: prctl(PR_GET_NO_NEW_PRIVS): %w", err)
	}
	if nnp != 1 {
		return errors.New("seccomp: install filter: no_new_privs is not set; call prctl(PR_SET_NO_NEW_PRIVS, 1) first")
	}
	fprog := unix.SockFprog{Len: uint16(len(p.Filter)), Filter: &p.Filter[0]}
	tid, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(p.Filter)
	if errno != 0 {
		return fmt.Errorf("seccomp: install filter: seccomp(SECCOMP_SET_MODE_FILTER): %w", errno)
	}
	if tid != 0 {
		// With TSYNC, a positive result is a thread that could not be
		// synchronized, and no thread got the filter.
		return fmt.Errorf("seccomp: install filter: thread %d has a filter that cannot be synchronized", tid)
	}
	return nil
}

// requiredActions are the filter's return actions, as the kernel names them
// in /proc/sys/kernel/seccomp/actions_avail.
var requiredActions = []struct {
	name   string
	action uint32
}{
	{"kill_process", unix.SECCOMP_RET_KILL_PROCESS},
	{"errno", unix.SECCOMP_RET_ERRNO},
	{"allow", unix.SECCOMP_RET_ALLOW},
}

// Available reports whether this kernel can run the filter: seccomp filter
// mode with the kill_process, errno and allow actions (Linux 4.14 or later),
// and a filter for runtime.GOARCH. reason says what is missing when ok is
// false, and what was found when ok is true.
func Available() (ok bool, reason string) {
	if _, ok := archs[runtime.GOARCH]; !ok {
		return false, fmt.Sprintf("no seccomp filter for %s", runtime.GOARCH)
	}
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil {
		if errors.Is(err, unix.EINVAL) {
			return false, "kernel built without seccomp (prctl(PR_GET_SECCOMP): EINVAL)"
		}
		return false, fmt.Sprintf("prctl(PR_GET_SECCOMP): %v", err)
	}
	missing, err := missingActions()
	if err != nil {
		return false, err.Error()
	}
	if len(missing) > 0 {
		return false, fmt.Sprintf("kernel lacks seccomp actions %s (needs Linux 4.14 or later)", strings.Join(missing, ", "))
	}
	return true, "seccomp filter mode with kill_process, errno and allow actions"
}

// missingActions asks the kernel which required actions it lacks, through
// seccomp(SECCOMP_GET_ACTION_AVAIL), which needs no /proc. A kernel too old
// for that operation, or a parent filter that blocks it, is asked through
// /proc/sys/kernel/seccomp/actions_avail instead.
func missingActions() ([]string, error) {
	var missing []string
	for _, a := range requiredActions {
		action := a.action
		_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action)))
		switch errno {
		case 0:
		case unix.EOPNOTSUPP:
			missing = append(missing, a.name)
		default:
			return missingActionsFromProc()
		}
	}
	return missing, nil
}

func missingActionsFromProc() ([]string, error) {
	const path = "/proc/sys/kernel/seccomp/actions_avail"
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot tell which seccomp actions the kernel has: %w", err)
	}
	have := strings.Fields(string(b))
	var missing []string
	for _, a := range requiredActions {
		if !slices.Contains(have, a.name) {
			missing = append(missing, a.name)
		}
	}
	return missing, nil
}
