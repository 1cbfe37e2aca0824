package linux

import (
	"os"
	"path"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// A user without root gets real memory, pids and cpu limits where the
// host delegates a cgroup subtree to them (systemd's Delegate=yes, the
// user@UID.service of a user manager, or a directory an administrator
// chowned): the process's own cgroup may be a leaf it cannot write, below
// a delegated ancestor it can. The run's cgroup is then made in that
// ancestor.
//
// On v2 the kernel moves a process between two cgroups only for a writer
// of cgroup.procs in their common ancestor, and a child gets only the
// controllers its parent's cgroup.subtree_control lists, so both are
// required of the ancestor. On v1 (hybrid included) a writable directory
// of the controller's hierarchy suffices: the run's helper moves itself
// into the child it made, whose files are its own.

// delegatedAncestor returns the nearest ancestor of dir, below the
// hierarchy's root, in which this process may make the run's cgroup for
// controller c; ok is false when there is none.
func delegatedAncestor(mode, root, dir, c string) (string, bool) {
	for d := path.Dir(dir); d != dir && strings.HasPrefix(d, root+"/"); dir, d = d, path.Dir(d) {
		if unix.Access(d, unix.W_OK) != nil {
			continue
		}
		if mode != "v2" {
			return d, true
		}
		if unix.Access(path.Join(d, "cgroup.procs"), unix.W_OK) != nil {
			continue
		}
		sub, err := os.ReadFile(path.Join(d, "cgroup.subtree_control"))
		if err == nil && slices.Contains(strings.Fields(string(sub)), c) {
			return d, true
		}
	}
	return "", false
}
