package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// Protected paths are kept from the run in two ways.
//
// Prevention, at the start (compile): every protected path that exists
// is read-only in the view, and every git directory (with those between
// it and its submodules' and worktrees') is a mount point there, so the
// run can neither write, rename, remove nor replace any of them.
//
// Names absent at the top of a writable tree hold a read-only
// placeholder for the run (placeholders.go); names absent deeper down
// (a nested .git, a repository's missing hooks directory) are refused
// when the run makes them, by the create guard (createguard.go).
//
// The end-of-run check (checkProtected), a backstop for what prevention
// cannot reach: a protected path that did not exist at start beneath an
// existing directory on a host without the create guard, or that the run
// reached again by moving a directory above it. A path found
// there that the run may have created is renamed to
// NAME.airlock-quarantine-RUNID and reported. The check resolves every
// path beneath a directory descriptor of its writable tree without
// following symlinks (it never touches anything outside), treats any
// error but "absent" as a failure of the run, and leaves alone every
// protected path that existed at start at the same place: the run could
// not change it, so a change there is the host's own (git config on the
// host during the run). Its state is journaled (journal.go), so a
// supervisor that dies has the check finished by the next start.

// ErrProtectCheck is wrapped by the error of a run whose end-of-run check
// of protected paths could not finish: the workspace may hold what the
// run planted, and must be looked at before host tools run in it.
var ErrProtectCheck = errors.New("sandbox: the end-of-run check of protected paths failed")

// protectPlan is what a run protects, decided at compile.
type protectPlan struct {
	// roots are the writable trees: the workspace (unless read-only)
	// and the profile's write paths.
	roots []string
	// present exist at compile and are read-only or pinned in the view.
	present []string
	// absent do not exist at compile; the check looks at each one's
	// shallowest missing component.
	absent []string
	// globs are the profile's workspace-relative wildcard entries; a
	// match that appears during the run is checked like an absent path.
	globs []string
	// pins are the present paths that are pinned (git directories),
	// not read-only.
	pins []string
	// dotgits are the .git entries in the writable trees at compile; a
	// .git the end of the run finds elsewhere is checked as created.
	dotgits []string
	// inProgress do not exist at compile, may be made by the run, and
	// are checked at its end only (gitProtection.inProgress).
	inProgress []string
	// named are those of nested found below the top at compile.
	named []string
	// nested are the names protected at any depth of the workspace
	// (profile.AnyDepthName): those there below the top are in present;
	// the create guard refuses new ones.
	nested []string
	// truncated: the search for repositories stopped at gitWalkLimit
	// entries in some tree.
	truncated bool
	// gitDirs are the repositories' git directories at compile
	// (gitProtection.gitDirs).
	gitDirs []string
	// placeholders are, per writable tree, the top-level names absent
	// at compile that the start holds with a placeholder.
	placeholders map[string][]string
	ws           string
	// guarded: the create guard holds the run (planProtection).
	guarded bool
	// home is the host user's home (for ~ in git configs).
	home string
	// globalHooks: gitProtection.globalHooks.
	globalHooks []string
}

// protectedState is one checked path at the start of the run: Rel inside
// Roots[Root]. Chain holds the device and inode of every directory from
// the root down to the path's parent, so a path the run reached again by
// moving a directory above it is told from the one that was there.
type protectedState struct {
	Root    int    `json:"root"`
	Rel     string `json:"rel"`
	Existed bool   `json:"existed"`
	// Link: it was a symlink, which no mount holds in place.
	Link bool `json:"link,omitempty"`
	// InProgress: a git operation's state (gitStateNames), which the
	// run may make and the check looks at only at the end.
	InProgress bool        `json:"in_progress,omitempty"`
	Ino        [2]uint64   `json:"ino,omitempty"`
	Chain      [][2]uint64 `json:"chain,omitempty"`
}

// rootState is one writable tree at the start: its identity, and the
// mode and owner the run must leave as they were.
type rootState struct {
	Path string    `json:"path"`
	Ino  [2]uint64 `json:"ino"`
	Mode uint32    `json:"mode"`
	UID  uint32    `json:"uid"`
	GID  uint32    `json:"gid"`
}

// snapshotProtected records the state of every protected path at the
// start. An error means a path could not be looked at (a root that
// cannot be opened, a directory that cannot be searched).
func snapshotProtected(pl protectPlan) ([]rootState, []protectedState, error) {
	var roots []rootState
	var states []protectedState
	seen := map[string]bool{}
	// Each root is opened once for the whole snapshot: the paths are
	// looked up beneath the descriptor whose identity the snapshot
	// records, not beneath a second open of the same name.
	fds := make([]int, 0, len(pl.roots))
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for _, r := range pl.roots {
		fd, err := openRoot(r)
		if err != nil {
			return nil, nil, err
		}
		fds = append(fds, fd)
		var s unix.Stat_t
		if err := unix.Fstat(fd, &s); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", r, err)
		}
		roots = append(roots, rootState{Path: r, Ino: [2]uint64{s.Dev, s.Ino}, Mode: s.Mode & 0o7777, UID: s.Uid, GID: s.Gid})
	}
	add := func(path string, mustExist bool) error {
		ri, rel := rootOf(pl.roots, path)
		if ri < 0 {
			return nil
		}
		root, rootIno := fds[ri], roots[ri].Ino
		st, err := stateAt(root, rootIno, ri, rel)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if !st.Existed && mustExist {
			// Gone between compile and now (the host's doing): nothing is
			// mounted there, so it is checked as absent.
			mustExist = false
		}
		if !st.Existed && strings.Contains(rel, "/") {
			// A name at the top is its own shallowest missing part;
			// only a deeper one needs the search.
			st, err = shallowestMissing(root, rootIno, ri, rel)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
		key := fmt.Sprint(st.Root, "/", st.Rel)
		if !seen[key] {
			seen[key] = true
			states = append(states, st)
		}
		return nil
	}
	for _, p := range pl.present {
		if err := add(p, true); err != nil {
			return nil, nil, err
		}
	}
	for _, p := range pl.absent {
		if err := add(p, false); err != nil {
			return nil, nil, err
		}
	}
	for _, p := range pl.inProgress {
		ri, rel := rootOf(pl.roots, p)
		if ri < 0 {
			continue
		}
		st, err := stateAt(fds[ri], roots[ri].Ino, ri, rel)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", p, err)
		}
		key := fmt.Sprint(st.Root, "/", st.Rel)
		if st.Existed || seen[key] || len(st.Chain) == 0 {
			continue // made on the host since the compile, or its git directory is gone
		}
		seen[key] = true
		st.InProgress = true
		states = append(states, st)
	}
	return roots, states, nil
}

// checkProtected runs the end-of-run check: the roots' mode and owner are
// put back if the run changed them, and what the run may have created at
// a protected path is moved aside. Every process of the run must be gone.
func checkProtected(j *runJournal) ([]Denial, error) {
	var denials []Denial
	var errs []error
	rootFDs := make([]int, len(j.Roots))
	for i, r := range j.Roots {
		rootFDs[i] = -1
		d, fd, err := checkRoot(r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		denials = append(denials, d...)
		if fd < 0 {
			continue // gone: nothing beneath it to check
		}
		rootFDs[i] = fd
		defer unix.Close(fd)
	}
	// Placeholders first: one removed leaves its name absent, as it was
	// at the start; one changed on the host is left, and not judged as
	// the run's.
	left, perrs := removePlaceholders(j, rootFDs)
	errs = append(errs, perrs...)
	states := append([]protectedState(nil), j.States...)
	// Wildcard entries may match paths that appeared during the run.
	// (rootOf names what lies beneath a root, never the root itself.)
	if ri := slices.IndexFunc(j.Roots, func(r rootState) bool { return r.Path == j.Workspace }); ri >= 0 && rootFDs[ri] >= 0 {
		known := map[string]bool{}
		for _, st := range states {
			known[fmt.Sprint(st.Root, "/", st.Rel)] = true
		}
		for _, g := range searchedGlobs(j.Globs, j.Guarded) {
			for _, m := range globMatches(j.Workspace, g) {
				_, rel := rootOf(rootPaths(j.Roots), m)
				if !known[fmt.Sprint(ri, "/", rel)] {
					states = append(states, protectedState{Root: ri, Rel: rel})
				}
			}
		}
	}
	// A new repository anywhere in a writable tree (mkdir -p a/b && git
	// init a/b): a .git that was not there at the start.
	had := map[string]bool{}
	for _, p := range j.DotGits {
		had[p] = true
	}
	// And a git directory under another name (git init --bare sub):
	// without the create guard, the backstop moves its HEAD aside, so
	// host git no longer takes it for one.
	hadGit := map[string]bool{}
	for _, g := range j.GitDirs {
		hadGit[g] = true
	}
	hadNamed := map[string]bool{}
	for _, p := range j.NestedHad {
		hadNamed[p] = true
	}
	newGitDir := func(ri int, g string) {
		if hadGit[g] {
			return
		}
		if i, rel := rootOf(rootPaths(j.Roots), filepath.Join(g, "HEAD")); i == ri {
			states = append(states, protectedState{Root: ri, Rel: rel})
			hadGit[g] = true
		}
	}
	for ri, r := range j.Roots {
		if rootFDs[ri] < 0 {
			continue
		}
		if isGitDir(r.Path) {
			newGitDir(ri, r.Path)
		}
		if j.Guarded {
			// The guard refused every .git, HEAD and **/NAME name the
			// walk below would look for, when the run made it: no walk.
			continue
		}
		budget := gitWalkLimit
		w := treeWalk{dotGit: func(_, path string) {
			if i, rel := rootOf(rootPaths(j.Roots), path); i == ri && !had[path] {
				states = append(states, protectedState{Root: ri, Rel: rel})
				had[path] = true
			}
		}, bare: func(g string) { newGitDir(ri, g) }}
		if r.Path == j.Workspace && len(j.Nested) > 0 {
			// Without the guard, sub/.vscode the run made is moved aside.
			w.names, w.named = map[string]bool{}, func(path string) {
				if i, rel := rootOf(rootPaths(j.Roots), path); i == ri && !hadNamed[path] {
					states = append(states, protectedState{Root: ri, Rel: rel})
					hadNamed[path] = true
				}
			}
			for _, n := range j.Nested {
				w.names[n] = true
			}
		}
		whole := walkDotGit(r.Path, &budget, w)
		if !whole && !j.Guarded {
			// Never silent: without the guard a .git beyond the limit may
			// be the run's, and is not moved aside.
			denials = append(denials, Denial{Kind: "filesystem", Target: r.Path,
				Reason: fmt.Sprintf("the end-of-run search for new repositories stopped after %d entries: a .git the run made beyond it was not moved aside; look before running git there", gitWalkLimit)})
		}
	}
	for _, st := range states {
		if st.Root >= len(rootFDs) || rootFDs[st.Root] < 0 {
			continue // its root failed above
		}
		if left[fmt.Sprint(st.Root, "/", st.Rel)] {
			continue
		}
		d, err := checkOne(rootFDs[st.Root], j.Roots[st.Root], st, j.RunID, had)
		if err != nil {
			errs = append(errs, err)
		}
		if d != nil {
			denials = append(denials, *d)
		}
	}
	if len(errs) > 0 {
		return denials, fmt.Errorf("%w: %w; look at these paths before running git or an editor in the workspace, then run airlock again", ErrProtectCheck, errors.Join(errs...))
	}
	return denials, nil
}

// checkRoot opens a writable tree for the check and puts back its mode
// and owner if they changed (chmod 0777 of the workspace would let any
// local user write into it).
func checkRoot(r rootState) ([]Denial, int, error) {
	fd, err := unix.Open(r.Path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		// The tree was removed (a temporary workspace cleaned up after
		// its supervisor died): what the run planted went with it, and a
		// journal that waited for it forever would stop every later run.
		return []Denial{{Kind: "filesystem", Target: r.Path,
			Reason: "the writable tree no longer exists: nothing the run left there remains to check"}}, -1, nil
	}
	if err != nil {
		return nil, -1, fmt.Errorf("open %s: %w", r.Path, err)
	}
	var s unix.Stat_t
	if err := unix.Fstat(fd, &s); err != nil {
		unix.Close(fd)
		return nil, -1, fmt.Errorf("%s: %w", r.Path, err)
	}
	if s.Dev != r.Ino[0] || s.Ino != r.Ino[1] {
		unix.Close(fd)
		return nil, -1, fmt.Errorf("%s is no longer the directory the run started with", r.Path)
	}
	var denials []Denial
	if s.Uid != r.UID || s.Gid != r.GID {
		reason := fmt.Sprintf("owner of the writable tree changed during the run to %d:%d; put back to %d:%d", s.Uid, s.Gid, r.UID, r.GID)
		if err := unix.Fchown(fd, int(r.UID), int(r.GID)); err != nil {
			unix.Close(fd)
			return nil, -1, fmt.Errorf("put back the owner of %s: %w", r.Path, err)
		}
		denials = append(denials, Denial{Kind: "filesystem", Target: r.Path, Reason: reason})
	}
	if s.Mode&0o7777 != r.Mode {
		reason := fmt.Sprintf("mode of the writable tree changed during the run to %04o; put back to %04o", s.Mode&0o7777, r.Mode)
		if err := unix.Fchmod(fd, r.Mode); err != nil {
			unix.Close(fd)
			return nil, -1, fmt.Errorf("put back the mode of %s: %w", r.Path, err)
		}
		denials = append(denials, Denial{Kind: "filesystem", Target: r.Path, Reason: reason})
	}
	return denials, fd, nil
}

// checkOne looks at one protected path and moves it aside if the run may
// have made it.
func checkOne(root int, r rootState, st protectedState, runID string, had map[string]bool) (*Denial, error) {
	rootPath := r.Path
	path := filepath.Join(rootPath, st.Rel)
	// checkRoot has made sure root is the tree of the start (r.Ino).
	parent, chain, err := openParent(root, r.Ino, st.Rel)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
		// A component above is gone, or is now a file or a symlink: the
		// path is not there. A symlink planted in its place leads host
		// tools elsewhere, to paths checked on their own account.
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer closeParent(parent, root)
	base := filepath.Base(st.Rel)
	var s unix.Stat_t
	err = unix.Fstatat(parent, base, &s, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !strings.Contains(st.Rel, "/") && isPlaceholderAt(parent, base) {
		// A placeholder another run still holds, or one made after this
		// run's start: nothing the run could have made there.
		return nil, nil
	}
	samePlace := sameChain(chain, st.Chain) && (!st.Link || st.Ino == [2]uint64{s.Dev, s.Ino})
	if st.Existed && samePlace {
		// It was read-only or pinned in the view, and the directories
		// above it are those of the start: the run could not replace
		// it, so any change is the host's.
		return nil, nil
	}
	what := "created during the run"
	if st.InProgress {
		what = "left by the run (a rebase, am, cherry-pick, revert or bisect in progress, which host git would go on with and run what it names)"
	}
	if st.Existed {
		what = "reached during the run through a directory moved above it"
	}
	if freshGitCreation(parent, base, s.Mode&unix.S_IFMT == unix.S_IFDIR) {
		return nil, nil // what git init, clone or worktree add make
	}
	if base == ".git" && s.Mode&unix.S_IFMT == unix.S_IFREG && freshGitFile(root, rootPath, st.Rel, had) {
		return nil, nil // git worktree add, a submodule's checkout
	}
	aside := base + ".airlock-quarantine-" + runID
	reason := fmt.Sprintf("protected path %s; moved to %s", what, aside)
	if err := unix.Renameat2(parent, base, parent, aside, unix.RENAME_NOREPLACE); err != nil {
		return &Denial{Kind: "filesystem", Target: path, Reason: fmt.Sprintf("protected path %s; could not move it aside: %v", what, err)},
			fmt.Errorf("move %s aside: %w", path, err)
	}
	return &Denial{Kind: "filesystem", Target: path, Reason: reason}, nil
}

// stateAt records rel beneath root.
func stateAt(root int, rootIno [2]uint64, ri int, rel string) (protectedState, error) {
	st := protectedState{Root: ri, Rel: rel}
	parent, chain, err := openParent(root, rootIno, rel)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
		// A component above is missing, a file, or a symlink (a .git
		// symlink's target is protected on its own account): nothing
		// is at this path without following a link.
		return st, nil
	}
	if err != nil {
		return st, err
	}
	defer closeParent(parent, root)
	st.Chain = chain
	var s unix.Stat_t
	err = unix.Fstatat(parent, filepath.Base(rel), &s, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case errors.Is(err, unix.ENOENT):
		return st, nil
	case err != nil:
		return st, err
	}
	if !strings.Contains(rel, "/") && isPlaceholderAt(parent, rel) {
		// Another run's placeholder (placeholders.go): this run takes it
		// over, and the name was absent for it.
		return st, nil
	}
	st.Existed = true
	st.Link = s.Mode&unix.S_IFMT == unix.S_IFLNK
	st.Ino = [2]uint64{s.Dev, s.Ino}
	return st, nil
}

// shallowestMissing returns the state of the first missing component of
// rel: a whole .git the run makes in a workspace that had none is judged
// as one, not by the parts of it the protected list names.
func shallowestMissing(root int, rootIno [2]uint64, ri int, rel string) (protectedState, error) {
	parts := strings.Split(rel, "/")
	for i := 1; i <= len(parts); i++ {
		st, err := stateAt(root, rootIno, ri, strings.Join(parts[:i], "/"))
		if err != nil || !st.Existed {
			return st, err
		}
	}
	return stateAt(root, rootIno, ri, rel)
}

// walkParent opens the directory holding rel beneath root, one component
// at a time without following symlinks, and returns the device and inode
// of each directory on the way (the root's included).
func walkParent(root int, rel string) (int, [][2]uint64, error) {
	fd, err := unix.Openat(root, ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, nil, err
	}
	var chain [][2]uint64
	parts := strings.Split(rel, "/")
	for i := 0; ; i++ {
		var s unix.Stat_t
		if err := unix.Fstat(fd, &s); err != nil {
			unix.Close(fd)
			return -1, nil, err
		}
		chain = append(chain, [2]uint64{s.Dev, s.Ino})
		if i == len(parts)-1 {
			return fd, chain, nil
		}
		next, err := unix.Openat2(fd, parts[i], &unix.OpenHow{
			Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		unix.Close(fd)
		if err != nil {
			return -1, nil, err
		}
		fd = next
	}
}

// openParent is walkParent for a root whose identity the caller has
// checked (rootIno, its device and inode): the chain starts with it, and
// a name at the top of the tree, most of the protected list, is looked
// up in root itself instead of in a second descriptor of it, which saves
// an open, a stat and a close for each name at the start of every run
// and again at its end. Release the parent with closeParent.
func openParent(root int, rootIno [2]uint64, rel string) (int, [][2]uint64, error) {
	if strings.Contains(rel, "/") {
		return walkParent(root, rel)
	}
	return root, [][2]uint64{rootIno}, nil
}

// closeParent closes a parent openParent opened, never root itself.
func closeParent(parent, root int) {
	if parent != root {
		unix.Close(parent)
	}
}

func sameChain(a, b [][2]uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func openRoot(path string) (int, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open %s: %w", path, err)
	}
	return fd, nil
}

// rootOf returns the index of the deepest root holding path, and path
// relative to it; -1 when none does or path is a root itself.
func rootOf(roots []string, path string) (int, string) {
	best, bestRel := -1, ""
	for i, r := range roots {
		rel, err := filepath.Rel(r, path)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		if best < 0 || len(r) > len(roots[best]) {
			best, bestRel = i, rel
		}
	}
	return best, bestRel
}

func rootPaths(rs []rootState) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Path
	}
	return out
}

// protectedPaths lists the existing paths the protected entries name; an
// entry may hold * and ? wildcards (filepath.Match, one name each).
func protectedPaths(ws string, rels []string) []string {
	var out []string
	for _, rel := range rels {
		path := filepath.Join(ws, rel)
		if !hasGlob(rel) {
			if _, err := os.Lstat(path); err == nil {
				out = append(out, path)
			}
			continue
		}
		out = append(out, globMatches(ws, rel)...)
	}
	return out
}

func globsOf(rels []string) []string {
	var out []string
	for _, rel := range rels {
		if hasGlob(rel) {
			out = append(out, rel)
		}
	}
	return out
}

func hasGlob(s string) bool { return strings.ContainsAny(s, "*?[") }
