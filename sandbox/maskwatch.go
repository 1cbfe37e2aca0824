package sandbox

import (
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox/internal/linux"
)

// Reads of masked paths are refused visibly where the supervisor may
// answer fanotify permission events (root): every mask of the view is a
// bind of one of two inodes, the helper hands those over with the deny
// watch's mounts (internal/linux/maskwatch.go), and the supervisor marks
// them FAN_OPEN_PERM. An open of a masked path is then refused (EPERM)
// by the supervisor, which names the path (the mask's mount point) on the
// run's stderr and in the Result. The masks are empty and readable for
// this, since the kernel checks the mode first: if the supervisor's group
// went away, an open would show nothing but an empty file.
//
// Without permission events the masks stay mode 000: the kernel refuses
// the open (EACCES) before any notification could be raised, so the
// refusal is silent (Report.Silent says so).

// maskTargets are the paths masks hide in a run's view.
func maskTargets(mounts []linux.Mount) []string {
	var out []string
	for _, m := range mounts {
		if m.Kind == linux.MountMask {
			out = append(out, m.Target)
		}
	}
	return out
}

// markMasks puts an inode mark on each mask inode and returns them.
func markMasks(fan int, fds []int) (map[fileID]bool, error) {
	ids := map[fileID]bool{}
	for _, fd := range fds {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return nil, fmt.Errorf("stat mask: %w", err)
		}
		if err := unix.FanotifyMark(fan, unix.FAN_MARK_ADD, unix.FAN_OPEN_PERM|unix.FAN_ONDIR, fd, ""); err != nil {
			return nil, fmt.Errorf("fanotify_mark mask: %w", err)
		}
		ids[fileID{st.Dev, st.Ino}] = true
	}
	return ids, nil
}

// isMask reports whether the event's descriptor is a mask inode.
func (w *denyWatch) isMask(fd int) bool {
	if len(w.masks) == 0 {
		return false
	}
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && w.masks[fileID{st.Dev, st.Ino}]
}

// maskReason says why path is masked, as far as the path tells.
func maskReason(deny []denyGlob, path string) string {
	switch {
	case slices.Contains(procMasked, path):
		return "read refused: masked in every sandbox (it describes the host's kernel)"
	case hidingGlob(deny, path) != "":
		return "read refused: masked by deny " + hidingGlob(deny, path)
	}
	return "read refused: masked (a host socket, a hard link to a file outside the workspace, or a part airlock could not read)"
}

// silentRefusals lists the refusals of a profile on this host that reach
// neither the run's stderr nor its Result, and why.
func silentRefusals(s profile.Spec, h HostInfo) []string {
	var out []string
	if !h.FanotifyPerm {
		out = append(out, "reads of masked paths (deny entries, /proc's kernel entries) fail with EACCES without an airlock line: "+
			"reporting them needs fanotify permission events ("+strings.TrimSuffix(h.FanotifyReason, ".")+")")
	}
	// No event exists for these anywhere: the kernel refuses the write
	// in the mount's flags, and a lookup with no network never leaves
	// the sandbox. airlock run reads the command's messages instead.
	out = append(out, "writes to read-only paths (protected paths, system paths) fail with EROFS, which the kernel reports to no one: "+
		"airlock run says so only from the command's own 'Read-only file system' message")
	if s.Network.Mode == profile.NetworkModeNone {
		out = append(out, "name lookups with the network off fail inside the sandbox, where no one sees them: "+
			"airlock run says so only from the resolver's message in the command's stderr")
	}
	if h.UnixGuard && !h.KillableWait {
		out = append(out, "a create (open with O_CREAT, mkdir, rename) or connect the supervisor checks can fail with EINTR when a signal the program handles arrives meanwhile: "+
			"the kernel "+h.Kernel+" lacks SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (Linux 5.19)")
	}
	if len(s.Filesystem.Exec) > 0 && !h.UnixGuard {
		out = append(out, "execs refused outside the exec paths fail with EACCES without an airlock line: "+
			"reporting them needs the seccomp notifier ("+h.UnixGuardReason+")")
	}
	return out
}
