package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox/internal/linux"
)

// planProtection decides, at compile, what the run protects: the
// profile's protected entries inside the workspace (unless the whole
// workspace is read-only), and what host git reads of the repositories
// in the writable trees (gitrepos.go). guarded: the create guard holds
// the run, and finds what lies deeper in the trees when a call comes, so
// nothing here looks further than the names the profile lists and each
// tree's own repository.
func planProtection(s profile.Spec, guarded bool) protectPlan {
	ws := s.Workspace
	var nested []string
	protected := s.Filesystem.Protected[:0:0]
	for _, rel := range s.Filesystem.Protected {
		if name, ok := profile.AnyDepthName(rel); ok {
			// At the top like any entry; below it, found by the walk and
			// refused by the create guard.
			nested = append(nested, name)
			rel = name
		}
		protected = append(protected, rel)
	}
	s.Filesystem.Protected = uniqueSorted(protected)
	if s.ReadOnlyWorkspace {
		nested = nil
	}
	pl := protectPlan{ws: ws, globs: globsOf(s.Filesystem.Protected), nested: uniqueSorted(nested), guarded: guarded}
	if !s.ReadOnlyWorkspace {
		pl.roots = append(pl.roots, ws)
	}
	for _, w := range s.Filesystem.Write {
		if fi, err := os.Stat(w); err == nil && fi.IsDir() {
			pl.roots = append(pl.roots, filepath.Clean(w))
		}
	}
	home, _ := os.UserHomeDir()
	pl.home = home
	git := discoverGit(pl.roots, home, os.Getenv, ws, pl.nested, guarded)
	pl.present = append(pl.present, git.pins...)
	pl.present = append(pl.present, git.named...)
	pl.named = git.named
	pl.present = append(pl.present, git.readOnly...)
	pl.absent = append(pl.absent, git.absent...)
	look := newNameLook()
	if !s.ReadOnlyWorkspace {
		for _, rel := range s.Filesystem.Protected {
			if hasGlob(rel) {
				continue
			}
			path := filepath.Join(ws, rel)
			if look.lexists(path) && (strings.Contains(filepath.Clean(rel), "/") || !look.heldAbsent(path)) {
				pl.present = append(pl.present, path)
			} else {
				pl.absent = append(pl.absent, path)
			}
		}
		pl.present = append(pl.present, protectedPaths(ws, searchedGlobs(pl.globs, guarded))...)
		// A top-level name the list holds only beneath (.git for
		// .git/hooks) is held too when it exists and is not a git
		// directory (pinned above): an empty .git, or another run's
		// placeholder, must not become a repository during this run.
		for _, top := range topNames(s.Filesystem.Protected) {
			if path := filepath.Join(ws, top); !look.heldAbsent(path) {
				pl.present = append(pl.present, path)
			}
		}
	}
	pl.placeholders = placeholderNames(pl, look, s.Filesystem.Protected, s.ReadOnlyWorkspace, guarded)
	pl.present = uniqueSorted(pl.present)
	pl.absent = uniqueSorted(pl.absent)
	pl.pins = git.pins
	pl.dotgits = git.dotgits
	pl.gitDirs = git.gitDirs
	pl.truncated = git.truncated
	pl.inProgress = git.inProgress
	pl.globalHooks = git.globalHooks
	return pl
}

// protectMounts are the view's mounts for the protected paths that
// exist: pins for git directories, read-only clones for the rest, parents
// first, nothing beneath a path already read-only.
func protectMounts(pl protectPlan) []linux.Mount {
	pinned := map[string]bool{}
	for _, p := range pl.pins {
		pinned[p] = true
	}
	paths := append([]string(nil), pl.present...)
	// Placeholders are made at the start (placeholders.go); one that
	// could not be made is not mounted (Optional).
	for root, names := range pl.placeholders {
		for _, n := range names {
			paths = append(paths, filepath.Join(root, n))
		}
	}
	sort.SliceStable(paths, func(i, j int) bool { return depth(paths[i]) < depth(paths[j]) })
	var ro []string
	var out []linux.Mount
	for _, p := range paths {
		under := false
		for _, r := range ro {
			if profile.Within(r, p) {
				under = true
				break
			}
		}
		if under {
			continue
		}
		if pinned[p] {
			out = append(out, linux.Mount{Kind: linux.MountPin, Target: p, Optional: true})
			continue
		}
		ro = append(ro, p)
		out = append(out, linux.Mount{Kind: linux.MountReadOnly, Target: p, Optional: true})
	}
	return out
}

// startProtection records the protected paths' state and journals it,
// before the helper starts.
func (p *Process) startProtection() error {
	pl := p.plan.protect
	if len(pl.roots) == 0 {
		return nil // nothing is writable
	}
	// Locked before anything of the trees is judged absent: another
	// run's placeholder is not removed from here until this run's check.
	locks, err := lockRoots(pl.roots)
	if err != nil {
		return &SetupError{Step: "protected paths", Err: err}
	}
	roots, states, err := snapshotProtected(pl)
	if err == nil {
		err = sameRoots(locks, roots)
	}
	if err != nil {
		closeAll(locks)
		return &SetupError{Step: "protected paths", Err: fmt.Errorf("%w; make the workspace readable and searchable by this user", err)}
	}
	j := &runJournal{RunID: p.runID, Workspace: pl.ws, Globs: pl.globs, Roots: roots, States: states, DotGits: pl.dotgits, locks: locks,
		GitDirs: pl.gitDirs, Nested: pl.nested, NestedHad: pl.named, Guarded: pl.guarded}
	for ri, r := range pl.roots {
		for _, n := range pl.placeholders[r] {
			j.Placeholders = append(j.Placeholders, placeholder{Root: ri, Name: n, Socket: placeholderMode(n) == unix.S_IFSOCK})
		}
	}
	dir, err := pickJournalDir(pl.roots)
	if err == nil {
		err = j.create(dir)
	}
	if err != nil {
		j.unlockRoots()
		return &SetupError{Step: "run journal", Err: err}
	}
	p.journal = j
	// Journaled first: a supervisor that dies from here on has them
	// removed by the next start there (by anyone: they are marked).
	if err := placePlaceholders(j); err != nil {
		return &SetupError{Step: "protected paths", Err: fmt.Errorf("%w; make the writable trees writable by this user, or remove what is in the way", err)}
	}
	return nil
}

// finishProtection runs the end-of-run check once every process of the
// run is gone. The journal is removed only when the check passed; else
// the next start tries again.
func (p *Process) finishProtection() ([]Denial, error) {
	j := p.journal
	if j == nil {
		return nil, nil
	}
	p.journal = nil
	denials, err := checkProtected(j)
	if err != nil {
		path := j.path
		j.release()
		return denials, fmt.Errorf("%w (the next start checks again; its journal %s stays until the check passes, remove it by hand once the workspace has been looked at)", err, path)
	}
	j.finish()
	return denials, nil
}

// guardConfig is what the create guard protects for this run
// (createguard.go): the writable trees' roots, and every protected path
// absent at the start by its shallowest missing name in the directory
// that held it. nil when the guard cannot run or nothing is writable.
func (p *Process) guardConfig() *linux.GuardConfig {
	j := p.journal
	if j == nil || !p.plan.protect.guarded {
		return nil
	}
	g := &linux.GuardConfig{Workspace: j.Workspace, Home: p.plan.protect.home, GlobalHooks: p.plan.protect.globalHooks}
	for _, r := range j.Roots {
		g.Roots = append(g.Roots, r.Ino)
	}
	g.Globs = guardGlobs(j.Workspace, j.Globs)
	for _, st := range j.States {
		if st.Existed || st.InProgress || len(st.Chain) == 0 {
			continue
		}
		g.Absent = append(g.Absent, linux.GuardName{Dir: st.Chain[len(st.Chain)-1], Name: filepath.Base(st.Rel)})
		// The directories on the way, each in the one above it.
		parts := strings.Split(st.Rel, "/")
		for i := 1; i < len(st.Chain) && i < len(parts); i++ {
			g.Held = append(g.Held, linux.GuardName{Dir: st.Chain[i-1], Name: parts[i-1]})
		}
	}
	g.Names = p.plan.protect.nested
	for _, d := range p.plan.protect.gitDirs {
		var s unix.Stat_t
		if unix.Stat(d, &s) == nil {
			g.GitDirs = append(g.GitDirs, [2]uint64{s.Dev, s.Ino})
		}
	}
	return g
}

// protectedRunStatus is the protected-paths line of one run: the
// Executor's (protectedPathsStatus), lowered to degraded when the
// search for repositories was cut short, so the limit never shrinks
// what is protected without the Report saying so.
func protectedRunStatus(st GuaranteeStatus, pl protectPlan, guard bool) GuaranteeStatus {
	if !pl.truncated || st.Status != Enforced && st.Status != Degraded {
		return st
	}
	why := fmt.Sprintf("the search for repositories stopped after %d entries in a writable tree: a repository beyond it has no read-only mounts, so its config and hooks stay writable", gitWalkLimit)
	if guard {
		why += " to a call that opens an existing file without O_CREAT (the create guard refuses making, renaming onto or appending with O_CREAT to a git directory's config, commondir, gitdir, hooks/ and info/ anywhere, and every new git directory)"
	}
	st.Status = Degraded
	if st.Reason != "" {
		st.Reason += "; "
	}
	st.Reason += why
	return st
}

// runGuarantees is the Report's guarantees and level for this run.
func (p *Process) runGuarantees() ([]GuaranteeStatus, Level) {
	r := p.e.report
	if !p.plan.protect.truncated {
		return r.Guarantees, r.Level
	}
	gs := append([]GuaranteeStatus(nil), r.Guarantees...)
	for i := range gs {
		if gs[i].Guarantee == profile.ProtectedPaths {
			gs[i] = protectedRunStatus(gs[i], p.plan.protect, p.plan.protect.guarded)
		}
	}
	return gs, levelOf(gs)
}

// protectedPathsStatus is the Report's line for protected paths. What
// exists at the start is kept from the run by mounts (with the create
// guard, what lies beneath the writable trees' own repositories and the
// top-level names is held by the guard when a call comes instead); a
// protected path absent at start (a nested sub/.git, a repository's
// missing hooks directory, an include target, a top-level name) is
// refused when the run makes it by the create guard (createguard.go);
// without the guard top-level names get placeholders (placeholders.go),
// the rest is moved aside only when the run ends, so host tools that run
// meanwhile can act on it, and the line is degraded.
func protectedPathsStatus(s profile.Spec, h HostInfo) GuaranteeStatus {
	st := GuaranteeStatus{Guarantee: profile.ProtectedPaths}
	switch {
	case s.ReadOnlyWorkspace && len(s.Filesystem.Write) == 0:
		st.Status, st.Reason = NotApplied, "nothing the host can see is writable"
	case !h.UserNamespaces:
		st.Status, st.Reason = Unavailable, "user namespaces unavailable: "+h.UserNSReason
	case h.CreateGuard:
		st.Status = Enforced
		st.Mechanism = "read-only and pinned mounts for protected paths and the writable trees' own repositories' git files present at start (nothing searches the workspace); a seccomp create guard refusing, when the call comes, a new .git, a HEAD outside the git directories there, every protected name absent at start, and making, writing (open for writing, truncate), chmod, linking or moving away any git directory's config and hooks, a hooks path or include target a repository's config names, anything named by the profile's **/NAME entries anywhere the host can see, and a git operation's state in a repository the start did not look at, and chmod or chown of a writable tree's root; journaled end-of-run check of what the start recorded as a backstop (it also moves aside a rebase, am, cherry-pick or bisect the run left in progress)"
	default:
		st.Status = Degraded
		st.Mechanism = "read-only and pinned mounts for protected paths and every repository's git files present at start; read-only placeholders for the top-level protected names absent at start (.git in every writable tree); journaled end-of-run check"
		st.Reason = "no create guard (" + h.CreateGuardReason + "): a protected path absent at start beneath an existing directory (a new nested repository such as sub/.git, a repository's missing hooks directory, an include target) can be created during the run; it is moved aside when the run ends, so a host tool that runs there during the run can act on it; the workspace's own mode and owner are put back at the end, not held; a directory can be made a git directory under another name (git init --bare), and the profile's **/NAME names below the top can be made, until the end of the run moves them aside"
	}
	return st
}
