package sandbox

import (
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox/internal/linux"
)

// The exec boundary of a profile that names its exec paths (the strict
// preset). Landlock's EXECUTE right covers execve only: the dynamic
// loader (ld-linux-x86-64.so.2 /tmp/x) maps a program with mmap(PROT_EXEC),
// which Landlock does not check, and an anonymous file from memfd_create
// lies beneath no path at all. So, on top of Landlock:
//
//   - every mount of the view that no exec path covers (the private tmp
//     and HOME, /dev and /dev/shm, read and write paths) is noexec: the
//     kernel then refuses both execve of a file there and a PROT_EXEC
//     mapping of it, whoever asks, O_TMPFILE files and /proc/self/fd links
//     to deleted files included;
//   - memfd_create and memfd_secret fail with ENOSYS (seccomp.BuildExecGuard),
//     so no anonymous file exists to run; programs that use one for shared
//     memory fall back to /dev/shm or a temporary file, both noexec.
//
// What stays possible, as in every sandbox that lets an interpreter run:
// code an interpreter or JIT builds in anonymous memory of its own.

// markNoExec makes each bind or tmpfs mount in mounts that no exec path
// covers noexec. An exec path strictly beneath such a bind (exec /opt/bin
// under read /opt) gets a bind of its own, returned in extra, so that it
// stays executable while the rest of the bind does not.
func markNoExec(mounts []linux.Mount, exec []string) (extra []linux.Mount) {
	targets := map[string]bool{}
	for _, m := range mounts {
		targets[m.Target] = true
	}
	for i := range mounts {
		m := &mounts[i]
		if (m.Kind != linux.MountBind && m.Kind != linux.MountTmpfs && m.Kind != linux.MountScratch) || withinAny(exec, m.Target) {
			continue
		}
		m.NoExec = true
		if m.Kind != linux.MountBind {
			continue
		}
		for _, x := range exec {
			if x != m.Target && profile.Within(m.Target, x) && !targets[x] {
				targets[x] = true
				extra = append(extra, linux.Mount{Kind: linux.MountBind, Source: x, Target: x, ReadOnly: m.ReadOnly, Optional: true})
			}
		}
	}
	return extra
}

func withinAny(roots []string, path string) bool {
	for _, r := range roots {
		if profile.Within(r, path) {
			return true
		}
	}
	return false
}

// execBoundaryStatus is the Report's line for exec-boundary.
func execBoundaryStatus(s profile.Spec, h HostInfo) GuaranteeStatus {
	st := GuaranteeStatus{Guarantee: profile.ExecBoundary}
	mech := "noexec mounts outside the exec paths"
	if h.LandlockABI > 0 {
		mech = "landlock EXECUTE + " + mech
	}
	switch {
	case len(s.Filesystem.Exec) == 0:
		st.Status, st.Reason = NotApplied, "the profile names no exec paths: programs run from every read and write path"
	case !h.UserNamespaces:
		st.Status, st.Reason = Unavailable, "user namespaces unavailable: "+h.UserNSReason
	case !h.Seccomp:
		st.Status, st.Mechanism = Degraded, mech
		st.Reason = "an anonymous file (memfd_create) can still be run: seccomp is unavailable (" + h.SeccompReason + ")"
	default:
		st.Status, st.Mechanism = Enforced, mech+" + seccomp (memfd_create, memfd_secret refused)"
	}
	return st
}
