package linux

import "golang.org/x/sys/unix"

// The guard proxy's view of git directories: a HEAD makes a directory
// one for host git whatever its name (refused outside the start's git
// directories, inGitDir), and the files git reads for config and hooks
// are held in any git directory, found when a call comes (gitFileOf).

// gitFileOf reports whether name in dir is a file host git reads for
// config or hooks of the git directory it is in: config,
// config.worktree, commondir, gitdir, hooks or info in a git directory,
// anything in its hooks/ or info/. The start protects those of the repositories it
// found with mounts; this holds any other (one beyond the start's
// search, gitProtection.truncated) against what makes a name: git
// config's rename of config.lock, a shell's >>, an editor's save.
func gitFileOf(dir int, name string) bool {
	switch name {
	case "config", "config.worktree", "commondir", "gitdir", "hooks", "info":
		// hooks and info themselves too: a directory renamed onto one
		// brings its files with it.
		if looksGitDirAt(dir) {
			return true
		}
	}
	up, err := unix.Openat(dir, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(up)
	var d unix.Stat_t
	if unix.Fstat(dir, &d) != nil {
		return false
	}
	for _, sub := range []string{"hooks", "info"} {
		var s unix.Stat_t
		if unix.Fstatat(up, sub, &s, unix.AT_SYMLINK_NOFOLLOW) == nil && s.Dev == d.Dev && s.Ino == d.Ino {
			return looksGitDirAt(up)
		}
	}
	return false
}

// isGitDirAt reports whether name beneath dir is a git directory as host
// git tells one: a HEAD, and objects/ or a commondir.
func isGitDirAt(dir int, name string) bool {
	fd, err := unix.Openat(dir, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var s unix.Stat_t
	// Git takes a symlinked HEAD (into refs/) as well as a file.
	if unix.Fstatat(fd, "HEAD", &s, unix.AT_SYMLINK_NOFOLLOW) != nil || s.Mode&unix.S_IFMT != unix.S_IFREG && s.Mode&unix.S_IFMT != unix.S_IFLNK {
		return false
	}
	if unix.Fstatat(fd, "objects", &s, unix.AT_SYMLINK_NOFOLLOW) == nil && s.Mode&unix.S_IFMT == unix.S_IFDIR {
		return true
	}
	return unix.Fstatat(fd, "commondir", &s, unix.AT_SYMLINK_NOFOLLOW) == nil
}

// looksGitDirAt reports whether dir is a git directory, or one made to
// look like none for a moment: a HEAD, or objects/ and refs/. A run that
// removed a repository's HEAD to write its config as an ordinary file's
// could not make a HEAD there again (inGitDir), but the host's user
// might, and host git would then read the run's config.
func looksGitDirAt(dir int) bool {
	var s unix.Stat_t
	if unix.Fstatat(dir, "HEAD", &s, unix.AT_SYMLINK_NOFOLLOW) == nil && (s.Mode&unix.S_IFMT == unix.S_IFREG || s.Mode&unix.S_IFMT == unix.S_IFLNK) {
		return true
	}
	for _, sub := range []string{"objects", "refs"} {
		if unix.Fstatat(dir, sub, &s, unix.AT_SYMLINK_NOFOLLOW) != nil || s.Mode&unix.S_IFMT != unix.S_IFDIR {
			return false
		}
	}
	return true
}

// maxDepth bounds inGitDir's walk up: deeper than any path the kernel
// takes (PATH_MAX / 2).
const maxDepth = 2048

// inGitDir reports whether dir is, or is beneath, a git directory, by
// its ".." entries up to the root: one that was a repository at the
// start (GuardConfig.GitDirs), or one that is a git directory now
// (isGitDirAt). The second needs no search of the workspace at the
// start: a run cannot make a git directory but beneath another (this
// check refuses its HEAD, and objects or commondir beside a HEAD), so
// what is one now and was not at the start lies in one that was (a
// submodule's, a worktree's, .git/logs).
func (p *guardProxy) inGitDir(dir int) bool {
	cur, err := unix.Openat(dir, ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer func() { unix.Close(cur) }()
	var prev [2]uint64
	for i := 0; i < maxDepth; i++ {
		var st unix.Stat_t
		if unix.Fstat(cur, &st) != nil {
			return false
		}
		id := [2]uint64{st.Dev, st.Ino}
		if p.gitDirs[id] || isGitDirAt(cur, ".") {
			return true
		}
		if i > 0 && id == prev {
			return false // the root
		}
		prev = id
		up, err := unix.Openat(cur, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return false
		}
		unix.Close(cur)
		cur = up
	}
	return false
}

// readOnlyMount reports whether dir is on a read-only mount of the view.
func readOnlyMount(dir int) bool {
	var fs unix.Statfs_t
	return unix.Fstatfs(dir, &fs) == nil && fs.Flags&unix.ST_RDONLY != 0
}
