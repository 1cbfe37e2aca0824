package tool

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The walk is checked on real symlinks: the kernel's answer (os.Stat of
// the same path, or where a write lands) is the reference.
func TestResolveNamesLikeTheKernel(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "a"), 0o755))
	must(os.MkdirAll(filepath.Join(root, "vault"), 0o755))
	must(os.WriteFile(filepath.Join(root, ".env"), []byte("root"), 0o644))
	must(os.WriteFile(filepath.Join(root, "a", ".env"), []byte("a"), 0o644))
	must(os.WriteFile(filepath.Join(root, "prod.env"), []byte("prod"), 0o644))
	must(os.WriteFile(filepath.Join(root, "vault", "key"), []byte("key"), 0o644))
	must(os.Symlink(".", filepath.Join(root, "a", "l")))
	must(os.Symlink("prod.env", filepath.Join(root, "link.env")))
	must(os.Symlink("vault", filepath.Join(root, "secrets")))
	must(os.Symlink("secrets", filepath.Join(root, "s2")))
	must(os.Symlink(filepath.Join(root, "missing", "new.txt"), filepath.Join(root, "dangling")))
	must(os.Symlink("loop", filepath.Join(root, "loop")))

	tests := []struct {
		path, want string
		names      []string
	}{
		{"a/l/../.env", ".env", []string{"a/.env"}},
		{"link.env", "prod.env", []string{"link.env"}},
		{"secrets/key", "vault/key", []string{"secrets/key"}},
		{"s2/key", "vault/key", []string{"s2/key", "secrets/key"}},
		{"dangling", "missing/new.txt", []string{"dangling"}},
		{".//a/./.env", "a/.env", nil},
		{"sub/../.env", ".env", nil},
		{"loop/x", "loop/x", nil},
	}
	for _, tt := range tests {
		got, names := ResolveNames(root + "/" + tt.path)
		if got != filepath.Join(root, tt.want) {
			t.Errorf("%s: target %s, want %s", tt.path, got, filepath.Join(root, tt.want))
		}
		var want []string
		for _, n := range tt.names {
			want = append(want, filepath.Join(root, n))
		}
		if !slices.Equal(names, want) {
			t.Errorf("%s: names %v, want %v", tt.path, names, want)
		}
		// The kernel agrees about existing files: same content.
		if data, err := os.ReadFile(root + "/" + tt.path); err == nil {
			if ref, _ := os.ReadFile(got); string(ref) != string(data) {
				t.Errorf("%s: the kernel opens %q, the walk says %s (%q)", tt.path, data, got, ref)
			}
		}
	}
	// A positive control: a lexical clean first gets a/l/.. wrong.
	if lexical := filepath.Clean(root + "/a/l/../.env"); lexical == filepath.Join(root, ".env") {
		t.Fatal("control: a lexical clean should not find the kernel's answer here")
	}
	// Writing through the dangling link creates its target: the kernel
	// agrees that is where a write lands.
	must(os.MkdirAll(filepath.Join(root, "missing"), 0o755))
	must(os.WriteFile(filepath.Join(root, "dangling"), []byte("x"), 0o644))
	if _, err := os.Stat(filepath.Join(root, "missing", "new.txt")); err != nil {
		t.Errorf("the write through the dangling link did not land where ResolveNames said: %v", err)
	}
}

func TestToolPathRefusesControlCharacters(t *testing.T) {
	for _, p := range []string{"/ws/a\x00b", "/ws/a\nb", "/ws/\x1b[2K", "/ws/a\u2028b", "/ws/a\u0085b"} {
		if _, err := toolPath(KindFilesystemRead, p, "/ws", "/home/u"); err == nil {
			t.Errorf("%q: accepted", p)
		}
	}
	r, err := toolPath(KindFilesystemRead, "/ws/.en[v]", "/ws", "/home/u")
	if err != nil || !r.Unresolved || r.Shape != "/ws/"+string(Hole) {
		t.Errorf(".en[v]: %+v %v, want an unresolved shape /ws/?", r, err)
	}
}
