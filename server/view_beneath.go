package server

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// readBeneath reads the regular file rel inside dir, at most limit bytes,
// resolving rel with openat2 so that no symlink (and no "..", no mount
// crossing of a magic link) is followed: what it reads is inside dir
// however the workspace's symlinks point or change meanwhile. Where the
// kernel has no openat2 it reads nothing (the view then shows no file
// content), rather than a weaker walk.
func readBeneath(dir, rel string, limit int64) ([]byte, bool) {
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(dfd)
	fd, err := unix.Openat2(dfd, rel, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil, false
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	// A FIFO or a device would block or never end: only regular files.
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil || int64(len(data)) > limit {
		return nil, false
	}
	return data, true
}
