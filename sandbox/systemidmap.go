package sandbox

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox/internal/linux"
)

// Secrets as root: a command run by root is uid 0 in its user namespace,
// the owner of every root-owned file, so without more it would read
// every credential root keeps under the system paths (a WireGuard key, a
// Docker daemon key), where an unprivileged user reads none. A root
// supervisor shows the system paths id-mapped instead
// (sandbox/internal/linux/idmap.go): root's files there are nobody's, and
// the command reads what every user may read. Files are judged by what
// they are (mode and owner), not by name; nothing is walked. The
// workspace, write paths and the profile's other read paths are the
// user's own and shown as they are.

// rootlessUserns is the user namespace the system paths are id-mapped
// through, made once per process.
var rootlessUserns = sync.OnceValues(linux.NewRootlessUserns)

// probeSystemIDMap reports whether this supervisor shows the system
// paths id-mapped: it runs as root and the kernel and filesystems allow
// it (Linux 5.12, a filesystem with idmapped mounts: ext4, xfs, btrfs,
// tmpfs since 6.3, overlayfs since 5.19). Only root needs it. The trees
// it made to find out are returned for the first run to use.
func probeSystemIDMap(uid int) (bool, string, *probedTrees) {
	if uid != 0 {
		return false, "", nil
	}
	userns, err := rootlessUserns()
	if err != nil {
		return false, err.Error(), nil
	}
	made := &probedTrees{made: time.Now(), trees: map[string]*os.File{}}
	for _, p := range profile.SystemReadPaths() {
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() {
			continue // missing, or a symlink (merged /usr)
		}
		fd, err := linux.IDMappedTree(p, userns, linux.Mount{ReadOnly: true})
		if err != nil {
			made.close()
			return false, fmt.Sprintf("%v (idmapped mounts need Linux 5.12 and a filesystem that has them)", err), nil
		}
		made.trees[p] = os.NewFile(uintptr(fd), "idmapped "+p)
	}
	return true, "", made
}

// probedTreesFresh is how long the probe's trees may serve a run. A
// tree is a copy of the mounts beneath its path as they were when it was
// made, so a run started later (an executor kept by a long-lived
// caller) makes its own and shows the system paths as they are mounted
// at its start; `airlock run` starts its run within milliseconds.
const probedTreesFresh = time.Second

// probedTrees are the id-mapped trees (read-only, nosuid) the host probe
// made to learn that the system paths can be id-mapped. The first run
// takes them instead of making the same trees again: one open_tree and
// one mount_setattr per system path, and one close, which unmounts the
// copy, about 0.3 ms a run.
type probedTrees struct {
	mu    sync.Mutex
	made  time.Time
	trees map[string]*os.File
}

// take hands over the probe's tree of source, made with m's flags, or
// nil when there is none, or it is too old (then all are closed).
func (t *probedTrees) take(m linux.Mount) *os.File {
	if t == nil || !m.ReadOnly || m.NoExec {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if time.Since(t.made) > probedTreesFresh {
		t.closeLocked()
		return nil
	}
	f := t.trees[m.Source]
	delete(t.trees, m.Source)
	return f
}

// close closes the trees no run took.
func (t *probedTrees) close() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closeLocked()
}

func (t *probedTrees) closeLocked() {
	for p, f := range t.trees {
		f.Close()
		delete(t.trees, p)
	}
}

// systemPath reports whether a bind mount shows a system path: read-only,
// its source one of the system read paths or beneath one.
func systemPath(m linux.Mount) bool {
	if m.Kind != linux.MountBind || !m.ReadOnly {
		return false
	}
	for _, p := range profile.SystemReadPaths() {
		if profile.Within(p, m.Source) {
			return true
		}
	}
	return false
}

// idmapSystemPaths gives the config's system mounts id-mapped trees, as
// descriptors the helper inherits after the ones already in extra, and
// returns them (the caller closes its copies once the helper has its
// own). A host without them is refused by the Report (read-boundary
// degraded for root) before a run gets here.
func (p *Process) idmapSystemPaths(cfg *linux.Config, extra []*os.File) ([]*os.File, error) {
	if !p.e.host.SystemIDMap {
		return nil, nil
	}
	userns, err := rootlessUserns()
	if err != nil {
		return nil, err
	}
	var trees []*os.File
	mounts := append([]linux.Mount(nil), cfg.Mounts...)
	for i, m := range mounts {
		if !systemPath(m) {
			continue
		}
		f := p.e.host.idmapTrees.take(m)
		if f == nil {
			fd, err := linux.IDMappedTree(m.Source, userns, m)
			if errors.Is(err, unix.ENOENT) && m.Optional {
				continue
			}
			if err != nil {
				for _, f := range trees {
					f.Close()
				}
				return nil, err
			}
			f = os.NewFile(uintptr(fd), "idmapped "+m.Source)
		}
		trees = append(trees, f)
		mounts[i].TreeFD = 2 + len(extra) + len(trees)
	}
	cfg.Mounts = mounts
	// The trees of system paths this run does not show are not kept.
	p.e.host.idmapTrees.close()
	return trees, nil
}

// rootReadStatus adds the id-mapped system paths to a root supervisor's
// read-boundary line, or lowers it where they cannot be had: root's
// credentials under the system paths would be readable.
func rootReadStatus(st GuaranteeStatus, h HostInfo) GuaranteeStatus {
	if h.UID != 0 || st.Status != Enforced {
		return st
	}
	if h.SystemIDMap {
		st.Mechanism += " + system paths id-mapped (root's files there read as nobody's)"
		return st
	}
	st.Status = Degraded
	st.Reason = "run as root, the command could read every root-only file under the system paths: they cannot be id-mapped here: " + h.SystemIDMapReason
	return st
}
