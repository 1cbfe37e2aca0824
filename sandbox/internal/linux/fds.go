package linux

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// closeRangeCloexec is CLOSE_RANGE_CLOEXEC (linux/close_range.h), which
// golang.org/x/sys does not define.
const closeRangeCloexec = 1 << 2

// CloseInheritedOnExec marks every descriptor from 3 up close-on-exec.
//
// A descriptor the caller of airlock holds without O_CLOEXEC (a shell's
// "exec 7>>file", a make jobserver's pipe, a harness's sockets) is
// inherited through every exec. Handed to the command it would reach
// files and peers that the mount view and Landlock never see: they check
// paths at open, and the descriptor was opened outside. Only the standard
// streams cross into the command; airlock's own hand-offs (config, error
// pipe, TAP and deny-watch sockets) are used before the exec and must not
// cross either, so one range covers them all and they stay usable until
// execve.
func CloseInheritedOnExec() error {
	err := unix.CloseRange(3, ^uint(0), closeRangeCloexec)
	if err == nil {
		return nil
	}
	// Kernels before 5.11 have no CLOSE_RANGE_CLOEXEC: mark each open
	// descriptor by name.
	if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("close_range: %w", err)
	}
	return cloexecEach()
}

func cloexecEach() error {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("list open descriptors: %w", err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return fmt.Errorf("list open descriptors: %w", err)
	}
	for _, name := range names {
		fd, err := strconv.Atoi(name)
		if err != nil || fd < 3 {
			continue
		}
		// EBADF: the directory's own descriptor, closed by now.
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
			return fmt.Errorf("mark descriptor %d close-on-exec: %w", fd, err)
		}
	}
	return nil
}
