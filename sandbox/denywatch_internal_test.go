package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/airlockhq/airlock/profile"
)

func TestCanMatchBeneath(t *testing.T) {
	for _, tc := range []struct {
		glob, dir string
		want      bool
	}{
		{"/ws/**/.env", "/ws", true},
		{"/ws/**/.env", "/ws/sub", true},
		{"/ws/**/.env", "/other", false},
		{"/ws/secrets", "/ws", true},
		{"/ws/secrets", "/ws/secrets", true},   // the whole bind is denied
		{"/ws/secrets", "/ws/secrets/a", true}, // beneath a denied directory
		{"/ws/secrets", "/ws/public", false},   // a sibling
		{"/etc/shadow", "/etc", true},          // the presets' system entries
		{"/etc/shadow", "/usr", false},         //
		{"/etc/ssh/ssh_host_*_key", "/etc", true},
		{"/home/*/.ssh/**", "/home/me", true},
		{"/home/*/.ssh/**", "/home/me/src", false},
		{"/**/*.pem", "/opt/tools", true},
		{"/ws/a/b", "/ws/a/b/c/d", true},
		{"/ws/a/b", "/ws/a/c", false},
	} {
		if got := newDenyGlob(tc.glob).canMatchBeneath(tc.dir, splitGlobPath(tc.dir)); got != tc.want {
			t.Errorf("canMatchBeneath(%q, %q) = %v, want %v", tc.glob, tc.dir, got, tc.want)
		}
	}
}

// The watch refuses exactly what the masks hide and profile.Denied says
// is denied: a match of the path or of a parent.
func TestDenyWatchMatchesLikeProfile(t *testing.T) {
	ws := t.TempDir()
	s := profile.Preset("workspace")
	s.Workspace = ws
	s.Filesystem.Deny = append(s.Filesystem.Deny, "**/.env", "**/*.pem", "secrets", "build/*.key")
	p, err := profile.New(s)
	if err != nil {
		t.Fatal(err)
	}
	pl := planDenyWatch(p.Spec(), resolvedGlobs(p.Spec().Filesystem.Deny), nil)
	if pl == nil {
		t.Fatal("no deny watch planned for a profile with workspace deny globs")
	}
	w := &denyWatch{globs: pl.globs}
	for _, rel := range []string{
		".env", "a/b/.env", ".env (deleted)", "k.pem", "x/y/k.pem", "secrets", "secrets/key", "secrets/a/b",
		"build/x.key", "build/sub/x.key", ".envrc", "env", "pem", "secretsx", "main.go",
	} {
		path := filepath.Join(ws, rel)
		got := w.deniedBy(path) != ""
		want := p.Denied(path)
		if rel == ".env (deleted)" {
			want = true // a denied file unlinked since it was opened
		}
		if got != want {
			t.Errorf("deniedBy(%s) = %v, profile.Denied = %v", rel, got, want)
		}
	}
	if g := w.deniedBy("/etc/shadow-"); g != "/etc/shadow-" {
		t.Errorf("deniedBy(/etc/shadow-) = %q; the presets' system entries are watched too", g)
	}
}

func TestPlanDenyWatch(t *testing.T) {
	ws := t.TempDir()
	tools := t.TempDir()
	link := filepath.Join(t.TempDir(), "tools-link")
	if err := os.Symlink(tools, link); err != nil {
		t.Fatal(err)
	}
	build := func(edit func(*profile.Spec)) profile.Spec {
		s := profile.Preset("workspace")
		s.Workspace = ws
		s.Filesystem.Deny = nil
		edit(&s)
		p, err := profile.New(s)
		if err != nil {
			t.Fatal(err)
		}
		return p.Spec()
	}
	roots := func(pl *denyWatchPlan) map[string]bool {
		out := map[string]bool{}
		if pl != nil {
			for _, r := range pl.roots {
				out[r.path] = r.writable
			}
		}
		return out
	}

	if pl := planDenyWatchOf(build(func(*profile.Spec) {}), nil); pl != nil {
		t.Errorf("no deny entry: want no watch, got %+v", pl)
	}
	if pl := planDenyWatchOf(build(func(s *profile.Spec) { s.Filesystem.Deny = []string{"/nowhere/**"} }), nil); pl != nil {
		t.Errorf("a deny entry outside every bind: want no watch, got %+v", pl)
	}
	got := roots(planDenyWatchOf(build(func(s *profile.Spec) { s.Filesystem.Deny = []string{"**/.env"} }), nil))
	if len(got) != 1 || got[ws] != true {
		t.Errorf("**/.env: want the writable workspace only, got %v", got)
	}
	roWithEtc := build(func(s *profile.Spec) {
		s.ReadOnlyWorkspace = true
		s.Filesystem.Deny = []string{"**/.env", "/etc/shadow"}
	})
	got = roots(planDenyWatchOf(roWithEtc, nil))
	if len(got) != 2 || got[ws] != false || got["/etc"] != false {
		t.Errorf("read-only workspace and /etc: got %v", got)
	}
	// With /etc held to its entries by Landlock, only the workspace is
	// watched.
	x := expandReadRoots(roWithEtc, resolvedGlobs(roWithEtc.Filesystem.Deny), nil)
	if _, ok := x["/etc"]; !ok {
		t.Fatalf("/etc not expanded: %v", x)
	}
	if got = roots(planDenyWatchOf(roWithEtc, x)); len(got) != 1 || got[ws] != false {
		t.Errorf("read-only workspace, /etc expanded: got %v", got)
	}
	// A deny entry written through a symlink matches the path the view
	// shows, as the masks do.
	pl := planDenyWatchOf(build(func(s *profile.Spec) {
		s.Filesystem.Read = append(s.Filesystem.Read, tools)
		s.Filesystem.Deny = []string{link + "/*.key"}
	}), nil)
	if got := roots(pl); len(got) != 1 || got[tools] {
		t.Fatalf("a deny entry through a symlink: want %s watched read-only, got %v", tools, got)
	}
	if w := (&denyWatch{globs: pl.globs}); w.deniedBy(filepath.Join(tools, "a.key")) == "" {
		t.Errorf("%s/a.key is not denied by %s/*.key (globs %+v)", tools, link, pl.globs)
	}
}

func TestDenyNewFilesStatus(t *testing.T) {
	ws := t.TempDir()
	spec := func(ro bool, deny ...string) profile.Spec {
		s := profile.Preset("workspace")
		s.Workspace = ws
		s.ReadOnlyWorkspace = ro
		s.Filesystem.Deny = deny
		p, err := profile.New(s)
		if err != nil {
			t.Fatal(err)
		}
		return p.Spec()
	}
	root := HostInfo{UserNamespaces: true, FanotifyPerm: true}
	user := HostInfo{UserNamespaces: true, FanotifyReason: "needs CAP_SYS_ADMIN"}
	for _, tc := range []struct {
		name string
		s    profile.Spec
		h    HostInfo
		want Enforcement
	}{
		{"no deny entries", spec(false), root, NotApplied},
		{"root, read-only mounts", spec(true, "**/.env", "/etc/shadow"), root, Enforced},
		{"root, writable workspace", spec(false, "**/.env"), root, Degraded},
		{"unprivileged", spec(true, "**/.env"), user, Degraded},
		{"no user namespaces", spec(false, "**/.env"), HostInfo{}, Unavailable},
	} {
		st := denyNewFilesStatus(tc.s, tc.h)
		if st.Status != tc.want {
			t.Errorf("%s: %s (%s), want %s", tc.name, st.Status, st.Reason, tc.want)
		}
		if (st.Status == Degraded || st.Status == Unavailable || st.Status == NotApplied) && st.Reason == "" {
			t.Errorf("%s: %s without a reason", tc.name, st.Status)
		}
	}
}

// TestExpandReadRoot: a read-only root beneath which deny entries match
// becomes one rule per entry it holds, without what they hide, descending
// only where they can match, without symlinks; roots they cannot match
// beneath, or hide whole, are left alone.
func TestExpandReadRoot(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"ssh", "ssl/certs", "ssl/private", "deep/a/b"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"hostname", "shadow", "ssh/ssh_config", "ssh/ssh_host_rsa_key", "ssh/ssh_host_rsa_key.pub", "ssl/certs/ca.pem", "ssl/private/k", "deep/a/b/c"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("hostname", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	globs := resolvedGlobs([]string{root + "/shadow", root + "/ssh/ssh_host_*_key", root + "/ssl/private"})
	got, ok := expandReadRoot(root, globs, nil)
	want := []string{"deep", "hostname", "ssh/ssh_config", "ssh/ssh_host_rsa_key.pub", "ssl/certs"}
	for i := range want {
		want[i] = filepath.Join(root, want[i])
	}
	slices.Sort(got)
	if !ok || !slices.Equal(got, want) {
		t.Errorf("expansion %v (%v), want %v", got, ok, want)
	}
	if !expandable(root, globs) {
		t.Error("a root deny entries match beneath is not expandable")
	}
	if expandable(filepath.Join(root, "deep"), globs) {
		t.Error("a root no deny entry can match beneath would be expanded")
	}
	if expandable(filepath.Join(root, "ssl/private"), globs) {
		t.Error("a root a deny entry hides whole would be expanded")
	}
}

func planDenyWatchOf(s profile.Spec, expanded readExpansion) *denyWatchPlan {
	return planDenyWatch(s, resolvedGlobs(s.Filesystem.Deny), expanded)
}
