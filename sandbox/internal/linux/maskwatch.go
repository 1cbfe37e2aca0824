package linux

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Masks hide a path behind an empty file or directory (buildMountView).
// Every mask of the view is a bind of one of two inodes, so a fanotify
// mark on those two inodes sees every open of every mask: the supervisor
// marks them with FAN_OPEN_PERM, refuses each open and names the masked
// path (the event descriptor's path is the mask's mount point) on the
// run's stderr and in its Result. The helper hands the two inodes over on
// the deny watch's socket, before the mounts beneath its roots.

// MaskTag is the hand-off message byte of the message carrying the mask
// inodes (mount messages carry 0 or 1).
const MaskTag = 2

// readableMasks reports whether the supervisor watches the masks, which
// must then pass the kernel's permission check for it to be asked.
func (c *DenyWatchConfig) readableMasks() bool {
	return c != nil && len(c.Masks) > 0
}

// handOverMasks sends the supervisor a readable descriptor of each
// distinct mask inode (at most the file and the directory) found at
// c.Masks in the finished view. A mask that was skipped (its path absent)
// or cannot be opened is left out: its open is not reported, and shows an
// empty file or directory, which hides as much as a refusal.
func handOverMasks(c *DenyWatchConfig) error {
	if !c.readableMasks() {
		return nil
	}
	// The mask inodes live on the view's root tmpfs; anything else at a
	// mask's path (no mask was placed) is not one.
	var root unix.Stat_t
	if err := unix.Stat("/", &root); err != nil {
		return fmt.Errorf("stat /: %w", err)
	}
	type inode struct{ dev, ino uint64 }
	seen := map[inode]bool{}
	var fds []int
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for _, target := range c.Masks {
		if len(fds) == 2 {
			break
		}
		fd, err := unix.Openat2(unix.AT_FDCWD, target, &unix.OpenHow{
			Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_NOCTTY,
			Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		if err != nil {
			continue
		}
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil || st.Dev != root.Dev {
			unix.Close(fd)
			continue
		}
		k := inode{st.Dev, st.Ino}
		if seen[k] {
			unix.Close(fd)
			continue
		}
		seen[k] = true
		fds = append(fds, fd)
	}
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	if err := unix.Sendmsg(c.FD, []byte{MaskTag}, oob, nil, 0); err != nil {
		return fmt.Errorf("hand the masks to the supervisor: %w", err)
	}
	return nil
}
