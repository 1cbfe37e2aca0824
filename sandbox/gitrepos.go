package sandbox

import (
	"bytes"
	"encoding/binary"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/profile"
)

// gitProtection is what host git reads, for config, hooks or attributes,
// of the repositories the run's writable trees hold when it starts. Git
// on the host (a shell prompt, an IDE, the agent's next command) runs
// programs named there: core.fsmonitor, core.hooksPath, hooks, filter and
// diff drivers, aliases with "!", sshCommand, pager, editor, includes.
type gitProtection struct {
	// readOnly exist now and become read-only in the view: every config
	// git reads (config, config.worktree, include targets, global and
	// system configs that lie in a writable tree), hooks directories
	// (.git/hooks, core.hooksPath), info/, commondir and gitdir files,
	// and gitfiles (a .git file saying "gitdir: ...").
	readOnly []string
	// pins are git directories and the directories between one and its
	// submodules' and worktrees' git directories. Each becomes a mount
	// point in the view, so the run cannot rename, remove or replace it
	// (mv .git .git.old && mkdir .git fails with EBUSY); what is inside
	// stays writable (objects, refs, the index).
	pins []string
	// absent are paths git would read that do not exist now: a hooks
	// directory a config names, an include target, a submodule's config
	// yet to be made. The end-of-run check looks at them.
	absent []string
	// inProgress are the state of a rebase, am, cherry-pick, revert or
	// bisect (gitStateNames) absent in a git directory now. The run may
	// make them (git rebase inside it works); the end-of-run check moves
	// aside what is left, so a later `git rebase --continue` on the host
	// runs no exec line of the run's.
	inProgress []string
	// dotgits are the .git entries the walk found; the end of the run
	// walks again and checks every .git that was not there.
	dotgits []string
	// gitDirs are the git directories found that are repositories now
	// (HEAD and objects or commondir): beneath them, and nowhere else
	// the host can see, the create guard lets a HEAD be made.
	gitDirs []string
	// named are the entries below the top of the workspace named by
	// one of the profile's **/NAME entries: read-only in the view.
	named []string
	// globalHooks are the core.hooksPath values of the global and
	// system configs, ~ expanded, a relative one as it is: git
	// takes it relative to each working tree, so the create guard
	// applies it to every repository it finds when a call comes.
	globalHooks []string
	// truncated is set when a writable tree held more than
	// gitWalkLimit entries: repositories beyond the walk's reach get no
	// mounts. The run's Report says so (protectedRunStatus), and a
	// profile that requires protected paths does not run.
	truncated bool
}

// gitWalkLimit bounds the directory entries the start of a run without
// the create guard looks at per writable tree, to find nested
// repositories (sub/.git) and bare git directories (with the guard
// nothing is walked: discoverGit).
const gitWalkLimit = 20000

// gitDirParts are the entries of a git directory that git reads for
// config, hooks or attributes, or that point it at another directory.
var gitDirParts = []string{"config", "config.worktree", "hooks", "info", "commondir", "gitdir"}

// gitStateNames are the entries of a git directory that hold an
// operation in progress, which host git goes on with when told to
// (--continue, bisect next/run/replay): their todo lists and options
// name commands (exec lines, strategies, the bisect terms and log).
var gitStateNames = []string{
	"rebase-merge", "rebase-apply", "sequencer",
	"BISECT_LOG", "BISECT_START", "BISECT_TERMS", "BISECT_NAMES", "BISECT_RUN",
	"BISECT_EXPECTED_REV", "BISECT_ANCESTORS_OK", "BISECT_FIRST_PARENT", "BISECT_HEAD",
}

type gitDiscovery struct {
	roots []string
	home  string
	seen  map[string]bool
	out   gitProtection
	// worktrees are the working trees of the repositories found, for a
	// relative core.hooksPath in a global or system config.
	worktrees []string
	dotgits   []string
	budget    int
	// names are entry names protected at any depth of ws (the
	// profile's **/NAME entries); the walk lists each one it finds
	// below the top in out.named.
	names map[string]bool
	ws    string
}

// discoverGit finds the repositories in roots (the writable trees of a
// run) and lists what host git reads of them. home is the host user's
// home (for ~ in configs and the global config); getenv reads the host
// environment (XDG_CONFIG_HOME, GIT_CONFIG_GLOBAL, GIT_CONFIG_SYSTEM).
//
// With guarded (the create guard holds the run), only each root's own
// repository is looked at (the root as a git directory, its .git, their
// submodules' and worktrees' git directories and what their configs
// name): the guard finds every other repository, and the names below
// the top of ws, when a call comes, so nothing here grows with the
// workspace. Without it, every tree is walked (walkDotGit, at most
// gitWalkLimit entries each) for nested repositories and bare git
// directories, and the same walk lists the entries named names below the
// top of ws.
func discoverGit(roots []string, home string, getenv func(string) string, ws string, names []string, guarded bool) gitProtection {
	d := &gitDiscovery{roots: roots, home: home, seen: map[string]bool{}, ws: ws, names: map[string]bool{}}
	for _, n := range names {
		d.names[n] = true
	}
	for _, root := range roots {
		d.budget = gitWalkLimit
		if isGitDir(root) {
			// A writable tree that is itself a git directory (a bare
			// repository, or a .git given to --allow-write).
			d.gitDir(root, "")
		}
		if guarded {
			path := filepath.Join(root, ".git")
			if fi, err := os.Lstat(path); err == nil {
				d.dotgits = append(d.dotgits, path)
				d.repo(root, path, fi.Mode().Type())
			}
			continue
		}
		d.walk(root)
	}
	// Global and system configs: protected when they lie in a writable
	// tree, and read for hooks directories and includes that do.
	var global []string
	if g := getenv("GIT_CONFIG_GLOBAL"); g != "" {
		global = append(global, g)
	} else {
		xdg := getenv("XDG_CONFIG_HOME")
		if xdg == "" && home != "" {
			xdg = filepath.Join(home, ".config")
		}
		if xdg != "" {
			global = append(global, filepath.Join(xdg, "git", "config"))
		}
		if home != "" {
			global = append(global, filepath.Join(home, ".gitconfig"))
		}
	}
	if s := getenv("GIT_CONFIG_SYSTEM"); s != "" {
		global = append(global, s)
	} else {
		global = append(global, "/etc/gitconfig")
	}
	for _, g := range global {
		d.protect(g)
		if v := d.config(g, d.worktrees, 0); v != "" {
			d.out.globalHooks = append(d.out.globalHooks, d.expand(v, "."))
		}
	}
	d.out.dotgits = d.dotgits
	d.out.readOnly = uniqueSorted(d.out.readOnly)
	d.out.pins = uniqueSorted(d.out.pins)
	d.out.absent = uniqueSorted(d.out.absent)
	d.out.inProgress = uniqueSorted(d.out.inProgress)
	return d.out
}

// walk finds the repositories under dir.
func (d *gitDiscovery) walk(dir string) {
	w := treeWalk{
		dotGit: func(wt, path string) {
			d.dotgits = append(d.dotgits, path)
			if fi, err := os.Lstat(path); err == nil {
				d.repo(wt, path, fi.Mode().Type())
			}
		},
		bare: func(g string) {
			// A bare repository (a fixture, a local remote): host git in
			// it reads its config like any other's.
			d.gitDir(g, "")
		},
	}
	if dir == d.ws && len(d.names) > 0 {
		w.names, w.named = d.names, func(path string) { d.out.named = append(d.out.named, path) }
	}
	if !walkDotGit(dir, &d.budget, w) {
		d.out.truncated = true
	}
}

// treeWalk is what walkDotGit reports, and to whom.
type treeWalk struct {
	// dotGit is called for every entry named .git, with the directory
	// holding it.
	dotGit func(wt, path string)
	// bare, when not nil, is called for every directory beneath the top
	// that is itself a git directory (isGitDir).
	bare func(g string)
	// named, when not nil, is called for every entry below the top
	// whose name is in names.
	names map[string]bool
	named func(path string)
}

// walkDotGit walks dir for w, breadth first, without following symlinks
// and without descending into git directories, until budget entries have
// been looked at (then it returns false). It reads directories with
// getdents into one buffer and allocates only for directories it will
// enter: every run pays for it, at its start and at its end.
func walkDotGit(dir string, budget *int, w treeWalk) bool {
	buf := make([]byte, 32<<10)
	queue := []string{dir}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		fd, err := unix.Open(cur, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		var subdirs []string
		head := false
		for {
			n, err := unix.Getdents(fd, buf)
			if err != nil || n <= 0 {
				break
			}
			for off := 0; off < n; {
				// struct linux_dirent64: ino, off (8 bytes each), reclen
				// (2), type (1), name (NUL-terminated).
				reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
				typ := buf[off+18]
				name := buf[off+19 : off+reclen]
				if i := bytes.IndexByte(name, 0); i >= 0 {
					name = name[:i]
				}
				off += reclen
				if *budget--; *budget < 0 {
					unix.Close(fd)
					return false
				}
				if w.named != nil && cur != dir && w.names[string(name)] {
					w.named(filepath.Join(cur, string(name)))
				}
				switch {
				case string(name) == "." || string(name) == "..":
				case string(name) == ".git":
					w.dotGit(cur, filepath.Join(cur, ".git"))
				case typ == unix.DT_DIR:
					subdirs = append(subdirs, filepath.Join(cur, string(name)))
				case typ == unix.DT_UNKNOWN:
					path := filepath.Join(cur, string(name))
					if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
						subdirs = append(subdirs, path)
					}
				default:
					head = head || string(name) == "HEAD"
				}
			}
		}
		unix.Close(fd)
		if head && w.bare != nil && cur != dir && isGitDir(cur) {
			w.bare(cur)
			continue
		}
		queue = append(queue, subdirs...)
	}
	return true
}

// repo handles the .git entry of the working tree wt.
func (d *gitDiscovery) repo(wt, dotgit string, typ fs.FileMode) {
	d.worktrees = append(d.worktrees, wt)
	switch {
	case typ.IsDir():
		d.gitDir(dotgit, wt)
	case typ.IsRegular():
		// A gitfile: "gitdir: PATH". It is read-only, so the run
		// cannot point it elsewhere, and the directory it names is
		// protected like any git directory.
		d.protect(dotgit)
		if target := readPointer(dotgit, "gitdir:"); target != "" {
			d.gitDir(resolveAgainst(filepath.Dir(dotgit), target), wt)
		}
	case typ&fs.ModeSymlink != 0:
		if target, err := filepath.EvalSymlinks(dotgit); err == nil && isGitDir(target) {
			d.gitDir(target, wt)
		}
	}
}

// gitDir protects the git directory g whose working tree is wt (empty
// when unknown: a submodule's is read from core.worktree).
func (d *gitDiscovery) gitDir(g, wt string) {
	g = filepath.Clean(g)
	if d.seen[g] {
		return
	}
	d.seen[g] = true
	if isGitDir(g) {
		d.out.gitDirs = append(d.out.gitDirs, g)
	}
	if d.writable(g) && !d.isRoot(g) {
		d.out.pins = append(d.out.pins, g)
	}
	for _, part := range gitDirParts {
		d.protect(filepath.Join(g, part))
	}
	// An operation in progress at the start stays as the user left it
	// (read-only); one the run starts is looked at when it ends.
	for _, name := range gitStateNames {
		path := filepath.Join(g, name)
		if !d.writable(path) {
			continue
		}
		if _, err := os.Lstat(path); err == nil {
			d.out.readOnly = append(d.out.readOnly, path)
		} else if os.IsNotExist(err) {
			d.out.inProgress = append(d.out.inProgress, path)
		}
	}
	if wt == "" {
		if v := configValue(filepath.Join(g, "config"), "core", "worktree"); v != "" {
			wt = resolveAgainst(g, v)
			d.worktrees = append(d.worktrees, wt)
		}
	}
	wts := []string{wt}
	if wt == "" {
		wts = nil
	}
	d.config(filepath.Join(g, "config"), wts, 0)
	d.config(filepath.Join(g, "config.worktree"), wts, 0)
	if c := readPointer(filepath.Join(g, "commondir"), ""); c != "" {
		d.gitDir(resolveAgainst(g, c), wt)
	}
	d.modules(filepath.Join(g, "modules"))
	d.worktreeDirs(filepath.Join(g, "worktrees"))
}

// modules protects the git directories of submodules, whose names may
// hold slashes (modules/a/b is submodule "a/b", possibly inside the git
// directory of submodule "a"). It returns whether dir holds any.
func (d *gitDiscovery) modules(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			d.protect(dir) // a submodule added later: the end-of-run check
		}
		return false
	}
	found := false
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if d.budget--; d.budget < 0 {
			d.out.truncated = true
			break
		}
		sub := filepath.Join(dir, e.Name())
		if isGitDir(sub) {
			d.gitDir(sub, "")
			found = true
		}
		switch e.Name() {
		case "objects", "refs", "logs", "hooks", "info", "lfs", "modules", "worktrees":
			continue // git's own, or handled by gitDir
		}
		if d.modules(sub) {
			found = true
		}
	}
	if found && d.writable(dir) {
		d.out.pins = append(d.out.pins, dir)
	}
	return found
}

// worktreeDirs protects the git directories of linked worktrees
// (.git/worktrees/NAME, each with its commondir and gitdir files).
func (d *gitDiscovery) worktreeDirs(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	if d.writable(dir) {
		d.out.pins = append(d.out.pins, dir)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		g := filepath.Join(dir, e.Name())
		wt := ""
		if back := readPointer(filepath.Join(g, "gitdir"), ""); back != "" {
			wt = filepath.Dir(resolveAgainst(g, back))
		}
		d.gitDir(g, wt)
	}
}

// config protects what the config file names: the hooks directory
// (relative to each working tree in wts) and include targets (relative
// to the file), and reads the includes in turn. It returns the file's
// own last core.hooksPath (configValue), so the file is read once.
func (d *gitDiscovery) config(file string, wts []string, depth int) (hooksPath string) {
	data, err := os.ReadFile(file)
	if err != nil || depth > 8 {
		return ""
	}
	eachGitConfigEntry(data, func(section, key, value string) {
		if section == "core" && key == "hookspath" {
			hooksPath = value
		}
		switch {
		case value == "":
		case section == "core" && key == "hookspath":
			if filepath.IsAbs(value) || strings.HasPrefix(value, "~") {
				d.protect(d.expand(value, ""))
				return
			}
			for _, wt := range wts {
				d.protect(d.expand(value, wt))
			}
		case (section == "include" || section == "includeif") && key == "path":
			target := d.expand(value, filepath.Dir(file))
			d.protect(target)
			d.config(target, wts, depth+1)
		}
	})
	return hooksPath
}

// expand resolves a path from a git config: ~ is the host user's home,
// a relative path is relative to base.
func (d *gitDiscovery) expand(v, base string) string {
	switch {
	case v == "~":
		return d.home
	case strings.HasPrefix(v, "~/"):
		return filepath.Join(d.home, v[2:])
	}
	return resolveAgainst(base, v)
}

// protect records path if the run could write it: read-only when it
// exists, for the end-of-run check when it does not.
func (d *gitDiscovery) protect(path string) {
	if path == "" || !filepath.IsAbs(path) || !d.writable(path) || d.isRoot(path) {
		return
	}
	if _, err := os.Lstat(path); err == nil {
		d.out.readOnly = append(d.out.readOnly, path)
	} else if os.IsNotExist(err) {
		d.out.absent = append(d.out.absent, path)
	}
}

func (d *gitDiscovery) writable(path string) bool {
	for _, r := range d.roots {
		if profile.Within(r, path) {
			return true
		}
	}
	return false
}

func (d *gitDiscovery) isRoot(path string) bool {
	for _, r := range d.roots {
		if filepath.Clean(r) == path {
			return true
		}
	}
	return false
}

// isGitDir reports whether dir looks like a git directory: a HEAD file
// and an objects directory or a commondir file.
func isGitDir(dir string) bool {
	// Git takes a symlinked HEAD (into refs/) as well as a file.
	if fi, err := os.Lstat(filepath.Join(dir, "HEAD")); err != nil || !fi.Mode().IsRegular() && fi.Mode()&os.ModeSymlink == 0 {
		return false
	}
	if fi, err := os.Lstat(filepath.Join(dir, "objects")); err == nil && fi.IsDir() {
		return true
	}
	_, err := os.Lstat(filepath.Join(dir, "commondir"))
	return err == nil
}

// readPointer returns the first line of a small pointer file (gitfile,
// commondir, gitdir) without the prefix, or "" when the file is not one.
func readPointer(path, prefix string) string {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return ""
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(data), "\n")
	line = strings.TrimSpace(line)
	if prefix != "" {
		if !strings.HasPrefix(line, prefix) {
			return ""
		}
		line = strings.TrimSpace(line[len(prefix):])
	}
	return line
}

func resolveAgainst(base, p string) string {
	if filepath.IsAbs(p) || base == "" {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// configValue returns the last value of section.key in a git config
// file, or "".
func configValue(file, section, key string) string {
	data, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	var v string
	eachGitConfigEntry(data, func(s, k, value string) {
		if s == section && k == key {
			v = value
		}
	})
	return v
}

func uniqueSorted(in []string) []string {
	sort.Strings(in)
	out := in[:0]
	for i, s := range in {
		if i == 0 || s != in[i-1] {
			out = append(out, s)
		}
	}
	return out
}
