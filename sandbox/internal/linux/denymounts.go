package linux

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// DenyWatchConfig asks the helper to hand the supervisor its own mounts
// beneath Roots once the mount view is built. The supervisor marks them
// in a fanotify group and refuses every open of a path a deny entry
// matches, files that appear after the start included. The marks are on
// the sandbox's mounts, which exist only in its mount namespace, so no
// host process is ever asked.
type DenyWatchConfig struct {
	// Roots are the paths of the view under which a deny entry can match
	// (the workspace, read and write paths). None when only the masks
	// are watched.
	Roots []string `json:"roots"`
	// Masks are the paths of the view hidden by masks (maskwatch.go);
	// when set, masks are readable and their inodes are handed over
	// first.
	Masks []string `json:"masks,omitempty"`
	// Links are the paths of the view whose mounts, file mounts too (a
	// protected file bound over itself), the supervisor checks for hard
	// links at each open (the workspace).
	Links []string `json:"links,omitempty"`
	// FD is the inherited unix socket the helper sends O_PATH descriptors
	// of the mounts over (SCM_RIGHTS) and then reads one byte from, once
	// the supervisor has marked them.
	FD int `json:"fd"`
}

// MountsPerMessage is the most descriptors one hand-off message carries,
// under the kernel's SCM_MAX_FD (253).
const MountsPerMessage = 250

// handOverDenyMounts sends the supervisor an O_PATH descriptor of every
// directory mount at or beneath c.Roots in the finished view and waits
// until the supervisor has marked them, so the command never runs
// unwatched. Each message carries up to MountsPerMessage descriptors and
// one byte: 1 when more follow, 0 for the last. Mounts only the hard-link
// check needs (beneath c.Links, not c.Roots) come first, in messages
// tagged LinkTag: their directories' opens need no answer. A nil c does
// nothing.
func handOverDenyMounts(c *DenyWatchConfig) error {
	if c == nil {
		return nil
	}
	defer unix.Close(c.FD)
	if err := handOverMasks(c); err != nil {
		return err
	}
	fds, linkOnly, err := mountsBeneath(c.Roots, c.Links)
	defer func() {
		for _, fd := range append(fds, linkOnly...) {
			unix.Close(fd)
		}
	}()
	if err != nil {
		return err
	}
	for len(linkOnly) > 0 {
		n := min(len(linkOnly), MountsPerMessage)
		if err := unix.Sendmsg(c.FD, []byte{LinkTag}, unix.UnixRights(linkOnly[:n]...), nil, 0); err != nil {
			return fmt.Errorf("hand the mounts to the supervisor: %w", err)
		}
		for _, fd := range linkOnly[:n] {
			unix.Close(fd)
		}
		linkOnly = linkOnly[n:]
	}
	for {
		n := min(len(fds), MountsPerMessage)
		more := byte(0)
		if n < len(fds) {
			more = 1
		}
		var oob []byte
		if n > 0 {
			oob = unix.UnixRights(fds[:n]...)
		}
		if err := unix.Sendmsg(c.FD, []byte{more}, oob, nil, 0); err != nil {
			return fmt.Errorf("hand the mounts to the supervisor: %w", err)
		}
		for _, fd := range fds[:n] {
			unix.Close(fd)
		}
		fds = fds[n:]
		if more == 0 {
			break
		}
	}
	var ack [1]byte
	n, err := unix.Read(c.FD, ack[:])
	if err != nil || n != 1 {
		return fmt.Errorf("the supervisor did not watch the mounts (read %d, %v)", n, err)
	}
	return nil
}

// LinkTag is the hand-off message byte of messages carrying mounts that
// only the hard-link check watches.
const LinkTag = 3

// mountsBeneath opens every directory mount of this mount namespace whose
// mount point is at or beneath one of roots, and every directory or
// regular file mount at or beneath one of files (returned in linkOnly
// when not beneath roots), once per mount. A mount that
// another mount hides is reached by nobody and needs no mark; opening its
// mount point lands on the one on top, which is the one to mark. A mount
// point that cannot be opened fails the step: an unmarked mount would be
// an unwatched one.
func mountsBeneath(roots, files []string) (fds, linkOnly []int, err error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	// The view's own root tmpfs: read-only, and what masks bind from.
	var root unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, "/", 0, unix.STATX_TYPE, &root); err != nil {
		return nil, nil, fmt.Errorf("statx /: %w", err)
	}
	seen := map[uint64]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMountinfo(fields[4])
		file, watched := beneathAny(files, mp), beneathAny(roots, mp)
		if !file && !watched {
			continue
		}
		fd, err := unix.Openat2(unix.AT_FDCWD, mp, &unix.OpenHow{
			Flags:   unix.O_PATH | unix.O_CLOEXEC | unix.O_NOFOLLOW,
			Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		if err != nil {
			return fds, linkOnly, fmt.Errorf("open mount %s: %w", mp, err)
		}
		var st unix.Statx_t
		if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_TYPE|unix.STATX_MNT_ID, &st); err != nil {
			unix.Close(fd)
			return fds, linkOnly, fmt.Errorf("statx mount %s: %w", mp, err)
		}
		// Only a directory can gain entries; a file mount (a protected
		// file, a mask) always shows the same inode, which only the
		// hard-link check looks at, and a mask is of the read-only root.
		mask := st.Dev_major == root.Dev_major && st.Dev_minor == root.Dev_minor
		typ := st.Mode & unix.S_IFMT
		if (typ != unix.S_IFDIR && (!file || typ != unix.S_IFREG)) || mask || seen[st.Mnt_id] {
			unix.Close(fd)
			continue
		}
		if typ == unix.S_IFREG {
			// fanotify_mark takes no O_PATH descriptor of a file (a
			// directory's is marked through "."): a readable one.
			unix.Close(fd)
			fd, err = unix.Openat2(unix.AT_FDCWD, mp, &unix.OpenHow{
				Flags:   unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC | unix.O_NOFOLLOW,
				Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
			})
			if err != nil {
				return fds, linkOnly, fmt.Errorf("open file mount %s for the hard-link check: %w", mp, err)
			}
		}
		seen[st.Mnt_id] = true
		if watched && typ == unix.S_IFDIR {
			fds = append(fds, fd)
		} else {
			linkOnly = append(linkOnly, fd)
		}
	}
	if err := sc.Err(); err != nil {
		return fds, linkOnly, fmt.Errorf("read mountinfo: %w", err)
	}
	return fds, linkOnly, nil
}

func beneathAny(roots []string, p string) bool {
	for _, r := range roots {
		if p == r || r == "/" || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

// unescapeMountinfo undoes the octal escapes (\040 for a space, \011,
// \012, \134) the kernel writes in mountinfo paths.
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
