package sandbox

import (
	"testing"

	"github.com/airlockhq/airlock/sandbox/internal/linux"
)

// markNoExec: mounts outside the exec paths become noexec, those inside
// stay executable, and an exec path beneath a noexec bind gets its own.
func TestMarkNoExec(t *testing.T) {
	mounts := []linux.Mount{
		{Kind: linux.MountBind, Source: "/usr", Target: "/usr", ReadOnly: true},
		{Kind: linux.MountBind, Source: "/etc", Target: "/etc", ReadOnly: true},
		{Kind: linux.MountBind, Source: "/opt", Target: "/opt", ReadOnly: true},
		{Kind: linux.MountTmpfs, Target: "/tmp"},
		{Kind: linux.MountTmpfs, Target: "/home/me"},
		{Kind: linux.MountBind, Source: "/home/me/ws", Target: "/home/me/ws"},
		{Kind: linux.MountSymlink, Source: "usr/bin", Target: "/bin"},
	}
	extra := markNoExec(mounts, []string{"/usr", "/bin", "/home/me/ws", "/opt/tool/bin"})
	want := map[string]bool{"/usr": false, "/etc": true, "/opt": true, "/tmp": true, "/home/me": true, "/home/me/ws": false, "/bin": false}
	for _, m := range mounts {
		if m.NoExec != want[m.Target] {
			t.Errorf("%s %s: noexec %v, want %v", m.Kind, m.Target, m.NoExec, want[m.Target])
		}
	}
	if len(extra) != 1 || extra[0].Target != "/opt/tool/bin" || extra[0].Source != "/opt/tool/bin" || extra[0].NoExec || !extra[0].ReadOnly {
		t.Errorf("extra mounts = %+v, want one executable read-only bind of /opt/tool/bin", extra)
	}
}
