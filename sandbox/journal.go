package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/profile"
)

// runJournal is what the end-of-run check of one run needs, written
// before the helper starts under the host user's state directory. The
// supervisor holds an exclusive lock on it for the whole run and removes
// it once the check has passed. A supervisor that dies first (SIGKILL
// from a harness, SIGPIPE in `airlock run ... | head`) leaves it
// unlocked; the next start (FinishInterruptedRuns) runs the check then,
// before it reads anything from a workspace (.airlock/).
type runJournal struct {
	RunID     string           `json:"run_id"`
	Workspace string           `json:"workspace"`
	Globs     []string         `json:"globs,omitempty"`
	Roots     []rootState      `json:"roots"`
	States    []protectedState `json:"states"`
	DotGits   []string         `json:"dot_gits,omitempty"`
	// Placeholders are the empty directories made for the run
	// (placeholders.go), removed by the check.
	Placeholders []placeholder `json:"placeholders,omitempty"`
	// GitDirs are the git directories that were repositories at the
	// start (gitProtection.gitDirs): any other the end finds, under any
	// name, is the run's, and its HEAD is moved aside.
	GitDirs []string `json:"git_dirs,omitempty"`
	// Nested are the names protected at any depth of the workspace
	// (profile.AnyDepthName), and NestedHad those of them below its top
	// at the start: one the end finds that was not there is the run's.
	Nested    []string `json:"nested,omitempty"`
	NestedHad []string `json:"nested_had,omitempty"`
	// Guarded: the create guard ran (no .git could be made where the
	// host sees it), so a search for new ones cut short misses none.
	Guarded bool `json:"guarded,omitempty"`

	file *os.File // open and locked while the run lasts
	path string   // where file is (its Name is the temporary one)
	// locks are the run's shared locks of its Roots (lockRoots), held
	// until the end-of-run check; nil for a journal a later start
	// finishes.
	locks []int
}

// journalDirs are where run journals may live, in order of preference:
// $XDG_STATE_HOME/airlock/runs (else ~/.local/state/airlock/runs) of the
// host user, then $XDG_RUNTIME_DIR/airlock/runs, then airlock-UID/runs
// under the system temp directory. A run uses the first one no writable
// path of its profile holds (a journal planted there would make the next
// start move or chmod paths of the sandbox's choosing); the next start
// looks in all of them.
func journalDirs() []string {
	var dirs []string
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" || !filepath.IsAbs(base) {
		if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
			base = filepath.Join(home, ".local", "state")
		}
	}
	if base != "" {
		dirs = append(dirs, filepath.Join(base, "airlock", "runs"))
	}
	if rt := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(rt) {
		dirs = append(dirs, filepath.Join(rt, "airlock", "runs"))
	}
	return append(dirs, filepath.Join(os.TempDir(), fmt.Sprintf("airlock-%d", os.Geteuid()), "runs"))
}

// pickJournalDir returns the first journal directory outside every
// writable path, made private to this user.
func pickJournalDir(writable []string) (string, error) {
	for _, dir := range journalDirs() {
		inside := false
		for _, w := range writable {
			if profile.Within(w, dir) || profile.Within(dir, w) {
				inside = true
			}
		}
		if inside {
			continue
		}
		if err := privateDir(dir); err != nil {
			continue
		}
		return dir, nil
	}
	return "", fmt.Errorf("every place for the run journal (%s) is inside a writable path; set XDG_STATE_HOME to a directory the sandbox cannot write", strings.Join(journalDirs(), ", "))
}

// privateDir makes dir (and its parent, for the temp-directory case) if
// missing, and checks it is a real directory owned by this user that no
// one else can write.
func privateDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	for _, d := range []string{filepath.Dir(dir), dir} {
		var s unix.Stat_t
		if err := unix.Lstat(d, &s); err != nil {
			return err
		}
		if s.Mode&unix.S_IFMT != unix.S_IFDIR || s.Uid != uint32(os.Geteuid()) || (d == dir && s.Mode&0o077 != 0) {
			return fmt.Errorf("%s is not a private directory of this user", d)
		}
	}
	return nil
}

// journalTemp ends the name of a journal still being written, which the
// next start ignores (and removes once unlocked: its run never began).
const journalTemp = ".tmp"

// create writes the journal and keeps it locked. It is written and
// locked under a temporary name and renamed into place, so that another
// start never finds it empty or half written, nor unlocked, under the
// name it looks for (a lock is the open file's, and moves with it).
func (j *runJournal) create(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("run journal: %w", err)
	}
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, j.RunID+".json")
	tmp := path + journalTemp
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("run journal: %w", err)
	}
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("run journal: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		return fail(fmt.Errorf("lock: %w", err))
	}
	// No fsync: the journal must outlive the supervisor, which the page
	// cache does; a machine crash ends the sandbox with it, and a
	// file and directory fsync would cost every run milliseconds.
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_NOREPLACE); err != nil {
		return fail(err)
	}
	j.file, j.path = f, path
	return nil
}

// removeAbandoned removes a journal left under its temporary name by a
// supervisor that died before its run began: one no one holds, old
// enough that it is not a start's between its create and its lock.
func removeAbandoned(path string) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || time.Since(fi.ModTime()) < time.Minute {
		return
	}
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
		os.Remove(path)
	}
}

// rewrite writes the journal again in place, still locked (a new file
// renamed over it would be unlocked, and another start could take it
// for an interrupted run's).
func (j *runJournal) rewrite() error {
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	if _, err := j.file.WriteAt(data, 0); err != nil {
		return fmt.Errorf("run journal: %w", err)
	}
	if err := j.file.Truncate(int64(len(data))); err != nil {
		return fmt.Errorf("run journal: %w", err)
	}
	return nil
}

// finish removes the journal of a run whose check passed, and unlocks it.
func (j *runJournal) finish() {
	j.unlockRoots()
	if j.file == nil {
		return
	}
	os.Remove(j.path)
	j.file.Close()
	j.file = nil
}

// release unlocks the journal but leaves it, for the next start to
// check again.
func (j *runJournal) release() {
	j.unlockRoots()
	if j.file != nil {
		j.file.Close()
		j.file = nil
	}
}

// unlockRoots lets go of the run's locks of its trees (placeholders.go).
func (j *runJournal) unlockRoots() {
	closeAll(j.locks)
	j.locks = nil
}

// FinishInterruptedRuns runs the end-of-run check of every run whose
// supervisor died before it could (its journal is left and unlocked).
// Executor.New calls it; a program that reads workspace files before
// making an Executor (airlock run reads .airlock/) calls it first, so a
// file an interrupted run planted there is moved aside before it is
// read. The error joins one *JournalError per journal whose check could
// not finish: such a workspace must be looked at before anything runs in
// it, but runs elsewhere need not wait for it (JournalsBlocking).
func FinishInterruptedRuns() ([]Denial, error) {
	var denials []Denial
	var errs []error
	for _, dir := range journalDirs() {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, &JournalError{Path: dir, Err: fmt.Errorf("%w: read the run journals in %s: %w", ErrProtectCheck, dir, err)})
			continue
		}
		if len(entries) == 0 {
			continue // nothing to finish (and no need to look at who owns it)
		}
		if privateDir(dir) != nil {
			continue // not ours: never act on what it holds
		}
		for _, e := range entries {
			if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".json"+journalTemp) {
				removeAbandoned(filepath.Join(dir, e.Name()))
				continue
			}
			if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".json") {
				continue
			}
			d, err := finishJournal(filepath.Join(dir, e.Name()))
			denials = append(denials, d...)
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	return denials, errors.Join(errs...)
}

// JournalError is a run journal whose end-of-run check could not finish
// (a workspace replaced on the host, a path that cannot be looked at).
// It stays until a check passes or the user removes it.
type JournalError struct {
	// Path is the journal file (or, when a journal directory cannot be
	// read, that directory).
	Path string
	// Workspace and Roots are the run's workspace and writable trees;
	// empty when the journal cannot be read, which then concerns every
	// run.
	Workspace string
	Roots     []string
	Err       error
}

func (e *JournalError) Error() string { return e.Err.Error() }
func (e *JournalError) Unwrap() error { return e.Err }

// Concerns reports whether a run that reads or writes the given trees
// (its workspace and write paths) would meet what the journal's run may
// have left: one tree holds the other.
func (e *JournalError) Concerns(trees ...string) bool {
	if len(e.Roots) == 0 && e.Workspace == "" {
		return true
	}
	for _, r := range append([]string{e.Workspace}, e.Roots...) {
		if r == "" {
			continue
		}
		for _, t := range trees {
			if t != "" && (profile.Within(r, t) || profile.Within(t, r)) {
				return true
			}
		}
	}
	return false
}

// JournalsBlocking splits the error of FinishInterruptedRuns into what
// keeps a run of the given trees from starting (its journals' runs wrote
// there) and the journals of other workspaces, which it may report but
// must not wait for. An error that is not a journal's blocks.
func JournalsBlocking(err error, trees ...string) (elsewhere []*JournalError, blocking error) {
	if err == nil {
		return nil, nil
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	var block []error
	for _, e := range errs {
		var je *JournalError
		if errors.As(e, &je) && !je.Concerns(trees...) {
			elsewhere = append(elsewhere, je)
			continue
		}
		block = append(block, e)
	}
	return elsewhere, errors.Join(block...)
}

// PendingJournal is a run journal left behind: a run still going (its
// supervisor holds the lock) or one whose check has not passed yet.
type PendingJournal struct {
	Path      string `json:"path"`
	RunID     string `json:"run_id"`
	Workspace string `json:"workspace"`
	Running   bool   `json:"running"`
}

// PendingJournals lists the journals in this user's journal directories,
// without acting on them (airlock doctor).
func PendingJournals() []PendingJournal {
	var out []PendingJournal
	for _, dir := range journalDirs() {
		entries, err := os.ReadDir(dir)
		if err != nil || privateDir(dir) != nil {
			continue
		}
		for _, e := range entries {
			if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".json") {
				continue
			}
			path := filepath.Join(dir, e.Name())
			f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
			if err != nil {
				continue
			}
			pj := PendingJournal{Path: path}
			if unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB) != nil {
				pj.Running = true
			}
			var j runJournal
			if data, err := readLimited(f, 16<<20); err == nil && json.Unmarshal(data, &j) == nil {
				pj.RunID, pj.Workspace = j.RunID, j.Workspace
			}
			f.Close()
			out = append(out, pj)
		}
	}
	return out
}

func finishJournal(path string) ([]Denial, error) {
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil // finished by someone else meanwhile
		}
		return nil, &JournalError{Path: path, Err: fmt.Errorf("%w: run journal %s: %w", ErrProtectCheck, path, err)}
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return nil, nil // its run is still going
	}
	var s unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &s); err != nil || s.Nlink == 0 {
		return nil, nil // removed by its run just before the lock
	}
	if s.Uid != uint32(os.Geteuid()) || s.Mode&0o077 != 0 {
		return nil, &JournalError{Path: path, Err: fmt.Errorf("%w: run journal %s is not this user's private file; remove it", ErrProtectCheck, path)}
	}
	var j runJournal
	data, err := readLimited(f, 16<<20)
	if err == nil {
		err = json.Unmarshal(data, &j)
	}
	if err != nil {
		return nil, &JournalError{Path: path, Err: fmt.Errorf("%w: run journal %s: %w; remove it once the workspace has been looked at", ErrProtectCheck, path, err)}
	}
	denials, err := checkProtected(&j)
	if err != nil {
		return denials, &JournalError{Path: path, Workspace: j.Workspace, Roots: rootPaths(j.Roots),
			Err: fmt.Errorf("interrupted run %s in %s: %w (its journal %s stays until the check passes; look at the workspace, then remove the journal by hand)", j.RunID, j.Workspace, err, path)}
	}
	os.Remove(path)
	return denials, nil
}
