package profile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want Size
		err  bool
	}{
		{"512MiB", 512 << 20, false},
		{"2GiB", 2 << 30, false},
		{"1.5G", 3 << 29, false},
		{"4096", 4096, false},
		{"64k", 64 << 10, false},
		{"10MB", 10e6, false},
		{"12 apples", 0, true},
		{"-1MiB", 0, true},
		{"", 0, true},
		{"MiB", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseSize(%q) = %v, %v; want %v, err=%v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestNewValidation(t *testing.T) {
	ws := t.TempDir()
	file := filepath.Join(ws, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		edit   func(*Spec)
		field  string
		fixHas string
	}{
		{"no workspace", func(s *Spec) { s.Workspace = "" }, "workspace", "set the project"},
		{"relative workspace", func(s *Spec) { s.Workspace = "proj" }, "workspace", "absolute"},
		{"missing workspace", func(s *Spec) { s.Workspace = ws + "/nope" }, "workspace", "does not exist"},
		{"workspace is a file", func(s *Spec) { s.Workspace = file }, "workspace", "not a directory"},
		{"root workspace", func(s *Spec) { s.Workspace = "/" }, "workspace", "whole filesystem"},
		{"relative read", func(s *Spec) { s.Filesystem.Read = []string{"etc"} }, "filesystem.read", "absolute"},
		{"relative write", func(s *Spec) { s.Filesystem.Write = []string{"./out"} }, "filesystem.write", "absolute"},
		{"deny hides workspace", func(s *Spec) { s.Filesystem.Deny = []string{"/tmp/**"} }, "filesystem.deny", "hide the workspace"},
		{"deny hides workspace parent", func(s *Spec) { s.Filesystem.Deny = []string{filepath.Dir(ws)} }, "filesystem.deny", "hide the workspace"},
		{"bad glob", func(s *Spec) { s.Filesystem.Deny = []string{"[x"} }, "filesystem.deny", "malformed"},
		{"protected escapes", func(s *Spec) { s.Filesystem.Protected = []string{"../x"} }, "filesystem.protected", "relative"},
		{"bad env name", func(s *Spec) { s.Env.Allow = []string{"A-B"} }, "env.allow", "variable name"},
		{"bad net mode", func(s *Spec) { s.Network.Mode = "some" }, "network.mode", "none, all or allow"},
		{"allow without mode", func(s *Spec) { s.Network.Allow = []string{"x.com"} }, "network.allow", "mode"},
		{"bad port", func(s *Spec) { s.Network = NetworkSpec{Mode: "allow", Allow: []string{"x.com:http"}} }, "network.allow", "port"},
		{"name with mode all", func(s *Spec) { s.Network = NetworkSpec{Mode: "all", Allow: []string{"x.com"}} }, "network.allow", "IP literals"},
		{"tiny memory", func(s *Spec) { s.Budgets.Memory = 1024 }, "budgets.memory", "4MiB"},
		{"negative pids", func(s *Spec) { s.Budgets.Pids = -1 }, "budgets.pids", "positive"},
		{"tiny scratch", func(s *Spec) { s.Budgets.Scratch = 4096 }, "budgets.scratch", "1MiB"},
		{"negative max_write", func(s *Spec) { s.Budgets.MaxWrite = -1 }, "budgets.max_write", "positive"},
		{"tiny max_write", func(s *Spec) { s.Budgets.MaxWrite = 100 }, "budgets.max_write", "64KiB"},
		{"unknown guarantee", func(s *Spec) { s.Require = []string{"magic"} }, "require", "known:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Preset("workspace")
			s.Workspace = ws
			tt.edit(&s)
			_, err := New(s)
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("New: err = %v, want *FieldError", err)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("errors.Is(err, ErrInvalid) = false")
			}
			if fe.Field != tt.field || !strings.Contains(err.Error(), tt.fixHas) {
				t.Errorf("err = %q; want field %q and text %q", err, tt.field, tt.fixHas)
			}
		})
	}
}

func TestFingerprint(t *testing.T) {
	ws := t.TempDir()
	s := Preset("workspace")
	s.Workspace = ws
	a, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	// The same profile written differently (order, duplicates, trailing
	// slashes) has the same fingerprint.
	s2 := Preset("workspace")
	s2.Workspace = ws + "/"
	s2.Filesystem.Read = append([]string{"/usr/", "/etc"}, s2.Filesystem.Read...)
	b, err := New(s2)
	if err != nil {
		t.Fatal(err)
	}
	if a.Fingerprint() != b.Fingerprint() {
		t.Errorf("equivalent specs differ: %s vs %s", a.Fingerprint(), b.Fingerprint())
	}
	s.Budgets.Pids++
	c, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	if c.Fingerprint() == a.Fingerprint() {
		t.Error("a different budget has the same fingerprint")
	}
	s.Budgets.MaxWrite = 1 << 30
	if d, err := New(s); err != nil || d.Fingerprint() == c.Fingerprint() {
		t.Errorf("a write budget does not change the fingerprint (err %v)", err)
	}
	// The profile is immutable: editing the returned spec changes nothing.
	got := a.Spec()
	got.Filesystem.Read[0] = "/"
	if a.Spec().Filesystem.Read[0] == "/" {
		t.Error("Spec() exposed the profile's own slice")
	}
}

func TestParseTOML(t *testing.T) {
	good := `preset = "strict"
[filesystem]
read = ["/opt"]
deny = ["**/.env"]
[budgets]
memory = "256MiB"
wall_time = "30s"
max_write = "2GiB"
`
	s, err := ParseTOML("p.toml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if s.Budgets.MaxWrite != 2<<30 {
		t.Errorf("max_write = %v; want 2GiB from the file", s.Budgets.MaxWrite)
	}
	if s.Budgets.Memory != 256<<20 || s.Budgets.Pids != 128 {
		t.Errorf("budgets = %+v; want memory from the file, pids from the strict preset", s.Budgets)
	}
	if !contains(s.Filesystem.Read, "/opt") || !contains(s.Filesystem.Read, "/usr") {
		t.Errorf("read = %v; want the preset's paths plus /opt", s.Filesystem.Read)
	}
	bad := []struct{ text, want string }{
		{"[filesytem]\nread = []\n", "unknown key filesytem"},
		{"[budgets]\nmemory = \"12 apples\"\n", "line 2"},
		{"[budgets]\nwall_time = \"soon\"\n", "not a duration"},
		{"preset = \"lax\"\n", "use one of"},
		{"workspace = \n", "line 1"},
	}
	for _, b := range bad {
		_, err := ParseTOML("p.toml", []byte(b.text))
		if err == nil || !strings.Contains(err.Error(), b.want) || !strings.Contains(err.Error(), "p.toml") {
			t.Errorf("ParseTOML(%q) err = %v; want it to name the file and say %q", b.text, err, b.want)
		}
	}
}

func TestAccess(t *testing.T) {
	ws := t.TempDir()
	s := Preset("workspace")
	s.Workspace = ws
	s.Filesystem.Deny = append(s.Filesystem.Deny, "**/.env")
	p, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	ws = p.Workspace()
	tests := []struct {
		kind, target string
		want         Access
	}{
		{KindCommandExecute, "ls", AccessGated},
		{KindFilesystemRead, ws + "/src/a.go", AccessAllow},
		{KindFilesystemRead, "src/a.go", AccessAllow},
		{KindFilesystemRead, "/usr/lib/x", AccessAllow},
		{KindFilesystemRead, "/etc/hosts", AccessAllow},
		{KindFilesystemRead, ws + "x/a", AccessDeny},
		{KindFilesystemRead, "/etc/shadow", AccessDeny},
		{KindFilesystemRead, "/root/.ssh/id_rsa", AccessDeny},
		{KindFilesystemRead, ws + "/sub/.env", AccessDeny},
		{KindFilesystemWrite, ws + "/out.txt", AccessAllow},
		{KindFilesystemWrite, ws + "/.git/hooks/pre-commit", AccessGated},
		{KindFilesystemWrite, ws + "/.bashrc", AccessGated},
		{KindFilesystemWrite, ws + "/.git/modules/lib/hooks/post-checkout", AccessGated},
		{KindFilesystemWrite, ws + "/.git/modules/lib/modules/x/config", AccessGated},
		{KindFilesystemWrite, ws + "/.git/modules/lib/objects/ab", AccessAllow},
		{KindFilesystemWrite, ws + "/.bashrc.d/x", AccessAllow},
		{KindFilesystemWrite, ws + "/sub/.bashrc", AccessAllow},
		{KindFilesystemWrite, "/etc/passwd", AccessDeny},
		{KindFilesystemWrite, ws + "/../elsewhere", AccessDeny},
		{KindNetworkConnect, "example.com:443", AccessGated},
		{KindNetworkConnect, "169.254.169.254:80", AccessDeny},
		{KindNetworkConnect, "168.63.129.16:80", AccessDeny},
		{KindNetworkConnect, "127.0.0.1:22", AccessDeny},
		{KindNetworkConnect, "[::1]:22", AccessDeny},
		{KindNetworkConnect, "[fd00:ec2::254]:80", AccessDeny},
		{KindNetworkConnect, "localhost:8080", AccessDeny},
		{KindNetworkConnect, "localhost.:8080", AccessDeny},
		{KindNetworkConnect, "app.localhost:443", AccessDeny},
		{KindNetworkConnect, "metadata.google.internal:80", AccessDeny},
		{KindNetworkConnect, "metadata.google.internal.:80", AccessDeny},
		{KindNetworkConnect, "notlocalhost.example:443", AccessGated},
		{KindToolInvoke, "mcp__github__create_issue", AccessGated},
		{"deployment.write", "prod", AccessDeny},
	}
	for _, tt := range tests {
		if got := p.Access(tt.kind, tt.target); got != tt.want {
			t.Errorf("Access(%s, %s) = %v; want %v", tt.kind, tt.target, got, tt.want)
		}
	}
}

func TestMatchGlob(t *testing.T) {
	tests := []struct {
		pat, path string
		want      bool
	}{
		{"/w/**/.env", "/w/.env", true},
		{"/w/**/.env", "/w/a/b/.env", true},
		{"/w/**/.env", "/w/a/.envrc", false},
		{"/etc/ssh/ssh_host_*_key", "/etc/ssh/ssh_host_rsa_key", true},
		{"/etc/ssh/ssh_host_*_key", "/etc/ssh/ssh_host_rsa_key.pub", false},
		{"/a/*", "/a/b/c", false},
		{"/**", "/anything/at/all", true},
	}
	for _, tt := range tests {
		if got := MatchGlob(tt.pat, tt.path); got != tt.want {
			t.Errorf("MatchGlob(%q, %q) = %v", tt.pat, tt.path, got)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
