package gate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/tool"
)

// The gate's tests decide with the real workspace profile (the preset
// through profile.New) over directories that exist: New and the tool
// package resolve symlinks, so a made-up path would not be decided as a
// real one is. Cases, rules and the golden file are written with the
// fixed paths /ws and /home/u so that they read the same on every
// machine; testDirs maps between those and the real directories.

const (
	fixedWorkspace = "/ws"
	fixedHome      = "/home/u"
)

// testDirs is a real workspace and home directory made for one test.
type testDirs struct {
	ws, home string
}

func newTestDirs(tb testing.TB) testDirs {
	tb.Helper()
	root, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	d := testDirs{ws: filepath.Join(root, "ws"), home: filepath.Join(root, "home")}
	for _, dir := range []string{d.ws, d.home} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	return d
}

// profile is the workspace preset over d.ws with auto_allow_in_sandbox
// set to autoAllow (nil: not set, the preset's own), and deny entries
// added.
func (d testDirs) profile(tb testing.TB, autoAllow *bool, deny ...string) *profile.Profile {
	tb.Helper()
	spec := profile.Preset("workspace")
	spec.Workspace = d.ws
	spec.AutoAllowInSandbox = autoAllow
	spec.Filesystem.Deny = append(spec.Filesystem.Deny, deny...)
	p, err := profile.New(spec)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// base is what the paths of a workspace layer rule are relative to.
func (d testDirs) base() rules.Base {
	return rules.Base{Root: d.ws, Cwd: d.ws, Home: d.home}
}

// rule is a workspace layer rule.
func (d testDirs) rule(tb testing.TB, effect rules.Effect, match string) *rules.Rule {
	tb.Helper()
	r, err := rules.NewRule(effect, match, rules.Workspace, d.base())
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// bash is a Bash call in the workspace, for execution "exec-1".
func (d testDirs) bash(command string) tool.Call {
	in, _ := json.Marshal(map[string]string{"command": command})
	return tool.Call{Tool: "Bash", Input: in, Workspace: d.ws, Home: d.home, ExecutionID: "exec-1"}
}

// real rewrites the fixed paths in s, where each stands as a whole path
// name, to the real directories.
func (d testDirs) real(s string) string {
	return replacePathName(replacePathName(s, fixedWorkspace, d.ws), fixedHome, d.home)
}

// fixed rewrites the real directories in s to the fixed paths. The
// directory holding both stands for "/", so that a path that leaves the
// workspace ("../outside") reads as it would from /ws.
func (d testDirs) fixed(s string) string {
	return strings.NewReplacer(d.ws, fixedWorkspace, d.home, fixedHome, filepath.Dir(d.ws)+"/", "/").Replace(s)
}

// replacePathName replaces old in s where no name character comes right
// before or after it: "/ws/a" and "//ws" change, "/wsx" and "/srv/ws" do
// not.
func replacePathName(s, old, new string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, old)
		if i < 0 {
			break
		}
		end := i + len(old)
		b.WriteString(s[:i])
		if (i == 0 || !isNameByte(s[i-1])) && (end == len(s) || !isNameByte(s[end])) {
			b.WriteString(new)
		} else {
			b.WriteString(old)
		}
		s = s[end:]
	}
	b.WriteString(s)
	return b.String()
}

func isNameByte(c byte) bool {
	return c == '.' || c == '_' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// allowEverything is a profile that allows every requirement. No preset
// does; the cases use it to show that deny and ask rules apply where the
// profile allows.
type allowEverything struct{}

func (allowEverything) Access(kind, target string) profile.Access { return profile.AccessAllow }

func (allowEverything) Fingerprint() string { return "test-allow-everything" }

// testProfiles are the profiles cases name: the workspace preset, the
// same with commands allowed, no profile at all (every requirement Gated),
// and allowEverything.
func testProfiles(tb testing.TB, d testDirs) map[string]ProfileAccess {
	on, off := true, false
	return map[string]ProfileAccess{
		"workspace":      d.profile(tb, nil),
		"workspace-auto": d.profile(tb, &on),
		"workspace-ask":  d.profile(tb, &off),
		"workspace-env":  d.profile(tb, nil, "**/.env"),
		"gated":          nil,
		"allow-all":      allowEverything{},
	}
}

func TestReplacePathName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/ws", "R"},
		{"/ws/a", "R/a"},
		{`{"file_path":"/ws/.env"}`, `{"file_path":"R/.env"}`},
		{"Read(//ws/x)", "Read(/R/x)"},
		{"cat /ws/a /ws/b", "cat R/a R/b"},
		{"/wsx/a", "/wsx/a"},
		{"/srv/ws/a", "/srv/ws/a"},
		{"/ws.d", "/ws.d"},
	}
	for _, tt := range tests {
		if got := replacePathName(tt.in, "/ws", "R"); got != tt.want {
			t.Errorf("replacePathName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
