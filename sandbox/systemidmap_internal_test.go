package sandbox

import (
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/sandbox/internal/linux"
)

// The trees the host probe makes are the ones the first run shows: they
// must be id-mapped (root's files there read as nobody's), taken once,
// only for a mount with the probe's flags, and not at all once old.
func TestProbedTreesServeTheFirstRun(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only a root supervisor id-maps the system paths")
	}
	ok, why, trees := probeSystemIDMap(0)
	if !ok {
		t.Skipf("no id-mapped system paths here: %s", why)
	}
	defer trees.close()
	if _, found := trees.trees["/etc"]; !found {
		t.Fatalf("the probe kept no tree of /etc: %v", trees.trees)
	}
	for _, tc := range []struct {
		name string
		m    linux.Mount
		want bool
	}{
		{"exec allowed, not the probe's flags", linux.Mount{Kind: linux.MountBind, Source: "/etc", ReadOnly: true, NoExec: true}, false},
		{"writable, not the probe's flags", linux.Mount{Kind: linux.MountBind, Source: "/etc"}, false},
		{"a path the probe did not map", linux.Mount{Kind: linux.MountBind, Source: "/etc/ssl", ReadOnly: true}, false},
		{"the probe's tree", linux.Mount{Kind: linux.MountBind, Source: "/etc", ReadOnly: true}, true},
		{"taken already", linux.Mount{Kind: linux.MountBind, Source: "/etc", ReadOnly: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := trees.take(tc.m)
			if (f != nil) != tc.want {
				t.Fatalf("take(%+v) = %v, want a tree: %v", tc.m, f, tc.want)
			}
			if f == nil {
				return
			}
			defer f.Close()
			// Evidence that the tree is the id-mapped one: root's
			// /etc/passwd shows as nobody's through it.
			var st unix.Stat_t
			if err := unix.Fstatat(int(f.Fd()), "passwd", &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				t.Fatal(err)
			}
			var host unix.Stat_t
			if err := unix.Lstat("/etc/passwd", &host); err != nil {
				t.Fatal(err)
			}
			if host.Uid == 0 && st.Uid != 65534 {
				t.Errorf("root's /etc/passwd shows as uid %d through the probe's tree, want 65534 (nobody)", st.Uid)
			}
		})
	}

	// An old tree is a copy of mounts that may have changed: not used,
	// and all the probe's trees are closed.
	_, _, old := probeSystemIDMap(0)
	old.made = time.Now().Add(-2 * probedTreesFresh)
	if f := old.take(linux.Mount{Kind: linux.MountBind, Source: "/usr", ReadOnly: true}); f != nil {
		f.Close()
		t.Errorf("a tree older than %v served a run", probedTreesFresh)
	}
	if len(old.trees) != 0 {
		t.Errorf("the old trees were not closed: %v", old.trees)
	}
}
