package docker

import (
	"os"
	"strconv"
	"strings"
)

// procSet is the processes of a container's cgroup as this host sees
// them: host pid → start time (so a reused pid is a different process).
type procSet map[int]string

// cgroupProcs reads the container's processes from its cgroup on this
// host; nil when the host does not show them (a remote Engine, another
// cgroup layout), and the caller then falls back to the sweep exec.
func cgroupProcs(id string) procSet {
	for _, path := range []string{
		"/sys/fs/cgroup/system.slice/docker-" + id + ".scope/cgroup.procs",
		"/sys/fs/cgroup/docker/" + id + "/cgroup.procs",
		"/sys/fs/cgroup/pids/docker/" + id + "/cgroup.procs",
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		set := procSet{}
		for _, f := range strings.Fields(string(b)) {
			pid, err := strconv.Atoi(f)
			if err != nil {
				return nil
			}
			// The keeper's processes come and go with each call's
			// lines; none of them is a call's.
			if hostUID(pid) == keeperUID {
				continue
			}
			set[pid] = startTime(pid)
		}
		return set
	}
	return nil
}

// leftNothing reports whether after holds only processes that were in
// before: every process the call started has ended. A keeper that had
// to restart its sleep counts as new, which only costs a sweep.
func leftNothing(before, after procSet) bool {
	if before == nil || after == nil {
		return false
	}
	for pid, st := range after {
		if b, ok := before[pid]; !ok || b != st || st == "" {
			return false
		}
	}
	return true
}

// hostUID is the real uid of pid as this host sees it, "" when gone.
func hostUID(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Uid:"); ok {
			if f := strings.Fields(v); len(f) > 0 {
				return f[0]
			}
		}
	}
	return ""
}
