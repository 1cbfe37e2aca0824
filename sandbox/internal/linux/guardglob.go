package linux

import (
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/internal/pathglob"
)

// globbed reports whether name in the directory parent (an O_PATH
// descriptor the walker holds) is at a path a protected glob matches, or
// beneath one. The directory's path is what the view shows for the
// descriptor now: a directory renamed at the same moment can make the
// name land elsewhere than checked, which the end-of-run check, matching
// the globs again, catches. A directory that is gone matches nothing,
// and nothing can be made in it.
func (p *guardProxy) globbed(parent int, name string) bool {
	if len(p.globs) == 0 {
		return false
	}
	var buf [unix.PathMax]byte
	n, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(parent), buf[:])
	if err != nil || n >= len(buf) {
		return true // a directory the proxy cannot name: refuse
	}
	dir := string(buf[:n])
	if strings.HasSuffix(dir, " (deleted)") || !strings.HasPrefix(dir, "/") {
		return false
	}
	path := strings.TrimSuffix(dir, "/") + "/" + name
	for _, g := range p.globs {
		if pathglob.MatchOrParent(g, path) {
			return true
		}
	}
	return false
}
