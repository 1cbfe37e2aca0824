package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/profile"
)

// The write budget (budgets.max_write) bounds how much the workspace and
// the write paths may grow during a run. No kernel mechanism bounds the
// bytes one process tree adds to a directory tree without root and a
// quota-enabled filesystem, but the kernel does report, at no cost that
// grows with the tree, what the filesystems holding them have lost: so
// the supervisor keeps the account by their free space.
//
//   - when the run starts it reads the free blocks (statfs f_bfree, the
//     root's reserve included) of each filesystem holding the paths (by
//     the paths, mount points in the sandbox, which the command cannot
//     rename);
//   - every writeCheckEvery it reads them again; past the budget's loss
//     it kills the run (StatusLimitExceeded): the filesystems then have
//     lost at most what the command wrote during one check beyond it;
//   - when the run has ended, one more reading: a run whose filesystems
//     lost more than the budget is limit_exceeded even if the command
//     had ended;
//   - RLIMIT_FSIZE holds every file to the budget (the kernel refuses the
//     write that would pass it: EFBIG, or SIGXFSZ for a process that does
//     not ignore it).
//
// What the count cannot tell apart is charged to the run: other
// processes' writes to those filesystems during the run count against
// the budget (the run fails closed), and the run's deletions offset its
// writes, as they would in a count of the paths. Space other processes
// free meanwhile offsets the run's writes too: the filesystems never
// lose more than the budget, though the paths may then grow by more.
//
// A filesystem whose statfs reports no blocks (some FUSE filesystems)
// tells nothing: for those runs the account is a walk of the paths, as
// it was before (allocated blocks, each inode once, at the start, when
// the free space says the budget may be passed or every writeWalkEvery,
// and at the end), which costs time that grows with the paths; a
// directory the walk cannot read makes the walk count the free space
// instead.
const (
	writeCheckEvery = 10 * time.Millisecond
	writeWalkEvery  = time.Second
)

// writeRoots are the paths the write budget covers: the workspace unless
// it is read-only, and the write paths, each only once.
func writeRoots(s profile.Spec) []string {
	var roots []string
	cands := append([]string(nil), s.Filesystem.Write...)
	if !s.ReadOnlyWorkspace {
		cands = append(cands, s.Workspace)
	}
	for _, c := range cands {
		inside := false
		for _, o := range cands {
			if o != c && profile.Within(o, c) {
				inside = true
			}
		}
		if !inside && !contains(roots, c) {
			roots = append(roots, c)
		}
	}
	return roots
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// maxWriteStatus says what bounds the write budget.
func maxWriteStatus(s profile.Spec) BudgetStatus {
	st := BudgetStatus{Budget: BudgetMaxWrite}
	switch {
	case s.Budgets.MaxWrite == 0:
		st.Status, st.Reason = NotApplied, "no write budget"
	case len(writeRoots(s)) == 0:
		st.Limit = s.Budgets.MaxWrite.String()
		st.Status, st.Reason = NotApplied, "nothing is writable: the workspace is read-only and there are no write paths"
	default:
		st.Limit = s.Budgets.MaxWrite.String()
		st.Status = Enforced
		st.Mechanism = fmt.Sprintf("supervisor accounting of the free space of the filesystems holding the workspace and write paths, read every %v, SIGKILL past the budget's loss, so they can lose what the command writes in one check beyond it; other processes' writes there during the run count against it; RLIMIT_FSIZE holds each file to the budget", writeCheckEvery)
	}
	return st
}

// watchWrites starts the write budget's watch, which ends the run past
// the budget.
func (p *Process) watchWrites() {
	if p.writes == nil {
		return
	}
	go p.writes.watch(p.done, func(growth int64) {
		p.writesOver.Store(growth)
		p.kill(StatusLimitExceeded)
	})
}

// finishWrites, once every process of the run has died, waits for the
// account's watch and returns how much the paths grew over the whole run
// (also in res.Limits); 0 without a write budget.
func (p *Process) finishWrites(res *Result) int64 {
	if p.writes == nil {
		return 0
	}
	<-p.writes.done
	wrote := max(p.writes.growth(), p.writesOver.Load())
	if res.Limits == nil {
		res.Limits = map[string]float64{}
	}
	res.Limits["write_growth_bytes"] = float64(wrote)
	return wrote
}

// grewBy says what the account counted, n bytes, for a denial.
func (a *writeAccount) grewBy(n int64) string {
	if a == nil || a.walks {
		return "the workspace and write paths grew by " + profile.Size(n).String()
	}
	return "the filesystems holding the workspace and write paths lost " + profile.Size(n).String() + " of free space during the run (other processes' writes there count too)"
}

func writeDenial(budget int64, what string) Denial {
	return Denial{Kind: "write", Target: profile.Size(budget).String(), Reason: "write budget " + what}
}

// writeAccount is one run's write budget.
type writeAccount struct {
	budget int64
	roots  []string
	free   map[unix.Fsid]int64  // each filesystem's free bytes at the start
	probe  map[unix.Fsid]string // a path to statfs each filesystem by
	walks  bool                 // some filesystem tells nothing: walk the paths
	base   int64                // with walks: the paths' allocated bytes at the start
	slack  int64                // with walks: free space the rest of the host used, as the last walk showed
	done   chan struct{}
}

// newWriteAccount takes the starting point: one statfs per filesystem
// (and, where one reports no blocks, one walk). It runs before the
// command does.
func newWriteAccount(s profile.Spec) (*writeAccount, error) {
	roots := writeRoots(s)
	if s.Budgets.MaxWrite == 0 || len(roots) == 0 {
		return nil, nil
	}
	a := &writeAccount{budget: int64(s.Budgets.MaxWrite), roots: roots,
		free: map[unix.Fsid]int64{}, probe: map[unix.Fsid]string{}, done: make(chan struct{})}
	for _, r := range roots {
		var st unix.Statfs_t
		err := unix.Statfs(r, &st)
		if errors.Is(err, unix.ENOENT) {
			continue // a missing write path is not bound
		}
		if err != nil {
			return nil, fmt.Errorf("statfs %s: %w", r, err)
		}
		if _, ok := a.free[st.Fsid]; !ok {
			a.free[st.Fsid] = freeBytes(&st)
			a.probe[st.Fsid] = r
			a.walks = a.walks || st.Blocks == 0
		}
	}
	if a.walks {
		used, complete := a.walk()
		if !complete {
			return nil, fmt.Errorf("cannot read every directory of %v to account the write budget (a filesystem there reports no free space to count by); make them readable or drop max_write", roots)
		}
		a.base = used
	}
	return a, nil
}

// freeBytes is what a filesystem has free, the root's reserve included:
// a root supervisor's command may write into it.
func freeBytes(st *unix.Statfs_t) int64 {
	size := st.Frsize
	if size == 0 {
		size = st.Bsize
	}
	return int64(st.Bfree) * size
}

// lost is how much free space the filesystems have lost since the start.
func (a *writeAccount) lost() int64 {
	var n int64
	for id, path := range a.probe {
		var st unix.Statfs_t
		if unix.Statfs(path, &st) == nil {
			n += a.free[id] - freeBytes(&st)
		}
	}
	return n
}

// growth is what the run is charged with: the filesystems' loss of free
// space; with walks, the walk's count, or the loss when the walk could
// not see everything.
func (a *writeAccount) growth() int64 {
	if !a.walks {
		return max(a.lost(), 0)
	}
	used, complete := a.walk()
	if !complete {
		return max(a.lost(), used-a.base)
	}
	return used - a.base
}

// watch checks the account until the run ends, calling over when the
// budget is passed.
func (a *writeAccount) watch(stop <-chan struct{}, over func(growth int64)) {
	defer close(a.done)
	tick := time.NewTicker(writeCheckEvery)
	defer tick.Stop()
	lastWalk, took := time.Now(), time.Duration(0)
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		if !a.walks {
			if g := a.lost(); g > a.budget {
				over(g)
				return
			}
			continue
		}
		since := time.Since(lastWalk)
		// The walks that only look for the host freeing space take at
		// most a twentieth of a core, however large the tree; those the
		// free space calls for (the command's writes, or a busy host's)
		// at most a fifth.
		if since < 4*took || (since < max(writeWalkEvery, 20*took) && a.lost() <= a.budget+a.slack) {
			continue
		}
		start := time.Now()
		lost := a.lost()
		g := a.growth()
		lastWalk = time.Now()
		took = lastWalk.Sub(start)
		if g > a.budget {
			over(g)
			return
		}
		// What the paths did not take, the rest of the host did.
		a.slack = max(lost-g, 0)
	}
}

// walk adds up the allocated bytes beneath the roots, each inode once;
// complete is false when a directory could not be read.
func (a *writeAccount) walk() (used int64, complete bool) {
	type key struct{ dev, ino uint64 }
	seen := map[key]bool{}
	complete = true
	var visit func(path string)
	visit = func(path string) {
		var st unix.Stat_t
		if err := unix.Lstat(path, &st); err != nil {
			return // gone since it was listed
		}
		k := key{st.Dev, st.Ino}
		if !seen[k] {
			seen[k] = true
			used += st.Blocks * 512
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return
		}
		f, err := os.Open(path)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				complete = false
			}
			return
		}
		names, err := f.Readdirnames(-1)
		f.Close()
		if err != nil {
			complete = false
		}
		for _, n := range names {
			visit(filepath.Join(path, n))
		}
	}
	for _, r := range a.roots {
		visit(r)
	}
	return used, complete
}
