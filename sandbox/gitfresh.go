package sandbox

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/profile"
)

// What the end-of-run check accepts as git's own making in a protected
// place, read without following symlinks, and the git config reader
// shared with the start of the run (gitrepos.go).

// freshGitCreation accepts what the run created at a protected path
// when it is what git itself makes in ordinary use: a .git directory
// (git init, git clone), or the modules/ or worktrees/ directory of a
// repository (git submodule update, git worktree add), each holding only
// fresh git directories.
func freshGitCreation(parent int, name string, isDir bool) bool {
	if !isDir {
		return false
	}
	switch name {
	case ".git":
		return freshGitDir(parent, name, false)
	case "modules", "worktrees":
		var s unix.Stat_t
		if unix.Fstatat(parent, "HEAD", &s, unix.AT_SYMLINK_NOFOLLOW) != nil {
			return false // not inside a git directory
		}
		dir, err := openBeneath(parent, name, unix.O_RDONLY|unix.O_DIRECTORY)
		if err != nil {
			return false
		}
		defer unix.Close(dir)
		return freshGitDirs(dir, name == "worktrees", 0)
	}
	return false
}

// freshGitFile accepts a gitfile (".git" holding "gitdir: PATH") the run
// created when PATH, inside the same writable tree, is a git directory
// that was there at the start (and so protected), a fresh one, or a
// fresh linked worktree's whose commondir leads to one that was there at
// the start: what git worktree add and a submodule's checkout write.
func freshGitFile(root int, rootPath, rel string, had map[string]bool) bool {
	data, err := readBeneath(root, rel)
	if err != nil {
		return false
	}
	line, _, _ := strings.Cut(string(data), "\n")
	target, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return false
	}
	target = resolveAgainst(filepath.Join(rootPath, filepath.Dir(rel)), strings.TrimSpace(target))
	if had[target] {
		return true
	}
	ri, trel := rootOf([]string{rootPath}, target)
	if ri < 0 {
		return false
	}
	parent, _, err := walkParent(root, trel)
	if err != nil {
		return false
	}
	defer unix.Close(parent)
	common, err := readBeneath(root, trel+"/commondir")
	switch {
	case errors.Is(err, unix.ENOENT):
		return freshGitDir(parent, filepath.Base(trel), false)
	case err != nil:
		return false
	}
	return had[filepath.Join(target, strings.TrimSpace(string(common)))] && freshGitDir(parent, filepath.Base(trel), true)
}

// freshGitDirs accepts a modules/ or worktrees/ directory whose every
// entry is a fresh git directory (a submodule name may hold slashes:
// modules/a/b).
func freshGitDirs(dir int, worktrees bool, depth int) bool {
	names, err := readDirBeneath(dir, ".")
	if err != nil || depth > 8 {
		return false
	}
	for _, n := range names {
		var s unix.Stat_t
		if unix.Fstatat(dir, n, &s, unix.AT_SYMLINK_NOFOLLOW) != nil || s.Mode&unix.S_IFMT != unix.S_IFDIR {
			return false
		}
		if unix.Fstatat(dir, n+"/HEAD", &s, unix.AT_SYMLINK_NOFOLLOW) == nil {
			if !freshGitDir(dir, n, worktrees) {
				return false
			}
			continue
		}
		sub, err := openBeneath(dir, n, unix.O_RDONLY|unix.O_DIRECTORY)
		if err != nil {
			return false
		}
		ok := !worktrees && freshGitDirs(sub, false, depth+1)
		unix.Close(sub)
		if !ok {
			return false
		}
	}
	return true
}

// freshGitDir accepts a git directory the run created when it is what
// `git init` (and ordinary use after it) makes: hooks holding only git's
// inert *.sample files, a config with only keys that never run a program,
// info/ with only exclude, no config.worktree, and no commondir (which
// points git at another directory's config and hooks) except a linked
// worktree's own "../..". Its modules/ and worktrees/ must be fresh too.
// Everything is read beneath parent without following symlinks; anything
// unreadable is not accepted.
func freshGitDir(parent int, name string, worktree bool) bool {
	dir, err := openBeneath(parent, name, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return false
	}
	defer unix.Close(dir)
	var s unix.Stat_t
	if err := unix.Fstatat(dir, "config.worktree", &s, unix.AT_SYMLINK_NOFOLLOW); !errors.Is(err, unix.ENOENT) {
		return false
	}
	if worktree {
		if data, err := readBeneath(dir, "commondir"); err != nil || strings.TrimSpace(string(data)) != "../.." {
			return false
		}
	} else if err := unix.Fstatat(dir, "commondir", &s, unix.AT_SYMLINK_NOFOLLOW); !errors.Is(err, unix.ENOENT) {
		return false
	}
	for _, sub := range []string{"modules", "worktrees"} {
		fd, err := openBeneath(dir, sub, unix.O_RDONLY|unix.O_DIRECTORY)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return false
		}
		ok := freshGitDirs(fd, sub == "worktrees", 0)
		unix.Close(fd)
		if !ok {
			return false
		}
	}
	onlyRegular := func(sub string, ok func(string) bool) bool {
		names, err := readDirBeneath(dir, sub)
		if errors.Is(err, unix.ENOENT) {
			return true
		}
		if err != nil {
			return false
		}
		for _, n := range names {
			var s unix.Stat_t
			if unix.Fstatat(dir, sub+"/"+n, &s, unix.AT_SYMLINK_NOFOLLOW) != nil || s.Mode&unix.S_IFMT != unix.S_IFREG || !ok(n) {
				return false
			}
		}
		return true
	}
	if !onlyRegular("hooks", func(n string) bool { return strings.HasSuffix(n, ".sample") }) ||
		!onlyRegular("info", func(n string) bool { return n == "exclude" }) {
		return false
	}
	data, err := readBeneath(dir, "config")
	if errors.Is(err, unix.ENOENT) {
		return true
	}
	return err == nil && gitConfigInert(data)
}

// readBeneath reads a small file beneath dir without following symlinks.
func readBeneath(dir int, rel string) ([]byte, error) {
	fd, err := openBeneath(dir, rel, unix.O_RDONLY)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	return readLimited(f, 1<<20)
}

func openBeneath(dir int, rel string, flags int) (int, error) {
	return unix.Openat2(dir, rel, &unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC | unix.O_NOFOLLOW),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
}

func readDirBeneath(dir int, rel string) ([]string, error) {
	fd, err := openBeneath(dir, rel, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	return f.Readdirnames(-1)
}

func readLimited(f *os.File, n int64) ([]byte, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(&limitedReader{f: f, n: n})
	return b.Bytes(), err
}

type limitedReader struct {
	f *os.File
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errors.New("file too large")
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.f.Read(p)
	l.n -= int64(n)
	return n, err
}

// inertGitKey reports whether key is one of the config keys `git init`,
// `git clone` and ordinary use write that cannot make git run a
// program. Anything else (core.fsmonitor, core.hooksPath,
// core.sshCommand, filters, aliases with "!", include.path, ...) is not.
// A switch, not a map: a package-level map is built at every airlock
// start (cmd/airlock's TestLazyInits).
func inertGitKey(key string) bool {
	switch key {
	case "core.repositoryformatversion", "core.filemode", "core.bare",
		"core.logallrefupdates", "core.ignorecase", "core.precomposeunicode",
		"core.symlinks", "core.autocrlf", "core.eol",
		"core.worktree", // a submodule's: where its files are, nothing to run
		"extensions.objectformat", "init.defaultbranch",
		"user.name", "user.email",
		"remote.url", "remote.fetch", "branch.remote", "branch.merge",
		// git clone --recurse-submodules (submodule.NAME.update, which
		// may name a command, is not here).
		"submodule.url", "submodule.active":
		return true
	}
	return false
}

func gitConfigInert(data []byte) bool {
	inert := true
	ok := eachGitConfigEntry(data, func(section, key, _ string) {
		inert = inert && inertGitKey(section+"."+key)
	})
	return ok && inert
}

// eachGitConfigEntry is the one git config reader the gate and the
// sandbox share.
var eachGitConfigEntry = profile.EachGitConfigEntry
