package guard

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// tunProbe opens /dev/net/tun without creating anything: the helper
// creates its device inside the sandbox's own network namespace, where
// it holds CAP_NET_ADMIN.
type tunProbe struct{}

func (tunProbe) Name() Name { return Tun }

func (tunProbe) Probe(*Host) Availability {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
	switch {
	case err == unix.EACCES || err == unix.EPERM:
		return Availability{Reason: "cannot open /dev/net/tun: permission denied (most distributions make it mode 0666: chmod 0666 /dev/net/tun)"}
	case err != nil:
		return Availability{Reason: "cannot open /dev/net/tun (" + err.Error() + "); load the tun module (modprobe tun) or, in a container, pass the device in"}
	}
	unix.Close(fd)
	return Availability{OK: true}
}

// fanotifyProbe asks whether this process may create a fanotify group
// with permission events.
type fanotifyProbe struct{}

func (fanotifyProbe) Name() Name { return Fanotify }

func (fanotifyProbe) Probe(*Host) Availability {
	fd, err := unix.FanotifyInit(unix.FAN_CLASS_CONTENT|unix.FAN_CLOEXEC|unix.FAN_NONBLOCK, unix.O_RDONLY)
	switch {
	case err == unix.EPERM:
		return Availability{Reason: "fanotify permission events need CAP_SYS_ADMIN in the initial user namespace; run airlock as root for deny entries to cover them"}
	case err == unix.EINVAL:
		return Availability{Reason: "the kernel has no fanotify permission events (CONFIG_FANOTIFY_ACCESS_PERMISSIONS)"}
	case err != nil:
		return Availability{Reason: "fanotify_init: " + err.Error()}
	}
	unix.Close(fd)
	return Availability{OK: true}
}

// unixSocketProbe asks for what the connect broker needs: the seccomp
// notifier (user_notif) and pidfd_getfd (Linux 5.6), checked on the
// supervisor itself.
type unixSocketProbe struct{}

func (unixSocketProbe) Name() Name { return UnixSocket }

func (unixSocketProbe) Probe(h *Host) Availability {
	if !h.Seccomp.OK {
		return Availability{Reason: "seccomp is unavailable"}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/seccomp/actions_avail"); err == nil && !strings.Contains(" "+string(b)+" ", " user_notif ") {
		return Availability{Reason: "the kernel lacks seccomp user notification (needs Linux 5.0)"}
	}
	pidfd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return Availability{Reason: "pidfd_open: " + err.Error() + " (needs Linux 5.3)"}
	}
	defer unix.Close(pidfd)
	fd, err := unix.PidfdGetfd(pidfd, 0, 0)
	if err != nil && (errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM)) {
		return Availability{Reason: "pidfd_getfd: " + err.Error() + " (needs Linux 5.6)"}
	}
	if err == nil {
		unix.Close(fd)
	}
	return Availability{OK: true}
}

// createProbe asks for the connect broker's needs and
// SECCOMP_IOCTL_NOTIF_ADDFD (Linux 5.9; 5.14 is asked for, the first
// with the whole of it, ADDFD_FLAG_SEND included).
type createProbe struct{}

func (createProbe) Name() Name { return Create }

func (createProbe) Probe(h *Host) Availability {
	if u := h.Found(UnixSocket); !u.OK {
		return u
	}
	if _, _, ok := kernelVersion(h.Kernel); !ok {
		return Availability{Reason: "cannot read the kernel version " + h.Kernel}
	}
	if !KernelAtLeast(h.Kernel, 5, 14) {
		return Availability{Reason: "the kernel lacks SECCOMP_ADDFD_FLAG_SEND (needs Linux 5.14)"}
	}
	return Availability{OK: true}
}

// KernelAtLeast reports whether the kernel release (uname -r) is at
// least major.minor; false when it cannot be read.
func KernelAtLeast(release string, major, minor int) bool {
	ma, mi, ok := kernelVersion(release)
	return ok && (ma > major || ma == major && mi >= minor)
}

func kernelVersion(release string) (major, minor int, ok bool) {
	_, err := fmt.Sscanf(release, "%d.%d", &major, &minor)
	return major, minor, err == nil
}
