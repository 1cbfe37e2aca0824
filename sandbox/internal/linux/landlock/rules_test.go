package landlock

import (
	"reflect"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCompile: the lists fold into one rule per path in the order the
// paths first appear, planned rules first; types come from Types; a
// typed rule that grants nothing its directories' rules do not is
// dropped, and nothing else is.
func TestCompile(t *testing.T) {
	const rd, rx = accessRead, accessRead | accessExec
	for _, tc := range []struct {
		name string
		rs   Ruleset
		want []Rule
	}{
		{
			name: "merged in order",
			rs:   Ruleset{Read: []string{"/usr", "/etc/"}, Exec: []string{"/usr", "/opt"}},
			want: []Rule{{Path: "/usr", Access: rx}, {Path: "/etc", Access: rd}, {Path: "/opt", Access: accessExec}},
		},
		{
			name: "planned rules first, merged with the lists",
			rs:   Ruleset{Rules: []Rule{{Path: "/etc/passwd", Access: rd, Type: TypeFile}}, Read: []string{"/usr"}, Exec: []string{"/etc/passwd"}},
			want: []Rule{{Path: "/etc/passwd", Access: rx, Type: TypeFile}, {Path: "/usr", Access: rd}},
		},
		{
			name: "typed rule under a rule granting as much",
			rs: Ruleset{Read: []string{"/usr", "/usr/bin", "/etc/passwd"}, Exec: []string{"/usr"},
				Types: map[string]FileType{"/usr/bin": TypeDir, "/etc/passwd": TypeFile}},
			want: []Rule{{Path: "/usr", Access: rx}, {Path: "/etc/passwd", Access: rd, Type: TypeFile}},
		},
		{
			name: "typed rule granting more than its directory",
			rs:   Ruleset{Read: []string{"/usr"}, Write: []string{"/usr/local"}, Types: map[string]FileType{"/usr/local": TypeDir}},
			want: []Rule{{Path: "/usr", Access: rd}, {Path: "/usr/local", Access: accessWrite, Type: TypeDir}},
		},
		{
			name: "rights of several directories above add up",
			rs: Ruleset{Read: []string{"/a", "/a/b/c"}, Exec: []string{"/a/b", "/a/b/c"},
				Types: map[string]FileType{"/a/b/c": TypeFile}},
			want: []Rule{{Path: "/a", Access: rd}, {Path: "/a/b", Access: accessExec}},
		},
		{
			name: "a file is no one's directory, an untyped rule is kept",
			rs: Ruleset{Read: []string{"/f", "/f/x", "/proc", "/proc/self/exe"},
				Types: map[string]FileType{"/f": TypeFile, "/f/x": TypeFile}},
			want: []Rule{{Path: "/f", Access: rd, Type: TypeFile}, {Path: "/f/x", Access: rd, Type: TypeFile}, {Path: "/proc", Access: rd}, {Path: "/proc/self/exe", Access: rd}},
		},
		{
			name: "list on / covers READ_DIR alone",
			rs:   Ruleset{List: []string{"/"}, Read: []string{"/etc/d"}, Types: map[string]FileType{"/etc/d": TypeDir}},
			want: []Rule{{Path: "/etc/d", Access: rd, Type: TypeDir}, {Path: "/", Access: unix.LANDLOCK_ACCESS_FS_READ_DIR}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.rs.Compile(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Compile:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
