package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/rules"
)

// ruleSet parses deny rules (or "ask MATCH", "allow MATCH") as the
// workspace layer of ws would hold them.
func ruleSet(t *testing.T, ws string, texts ...string) *rules.Set {
	t.Helper()
	base := rules.Base{Root: ws, Cwd: ws, Home: "/home/u"}
	var rs []*rules.Rule
	for _, text := range texts {
		effect, match := rules.Deny, text
		if e, m, ok := strings.Cut(text, " "); ok && (e == "ask" || e == "allow") {
			effect, match = rules.Effect(e), m
		}
		r, err := rules.NewRule(effect, match, rules.Workspace, base)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rules.NewSet(rs)
}

func TestKernelRules(t *testing.T) {
	ws := t.TempDir()
	tests := []struct {
		rule      string
		kernel    bool
		deny      []string // overlay filesystem.deny
		protected []string // overlay filesystem.protected
		netDeny   []string // overlay network.deny
		note      string   // part of the mechanism or note
	}{
		{rule: "Read(./.env)", kernel: true, deny: []string{ws + "/.env"}},
		{rule: "Read(.env)", kernel: true, deny: []string{ws + "/**/.env"}},
		{rule: "Read(/secrets/**)", kernel: true, deny: []string{ws + "/secrets/**"}},
		{rule: "Read(//etc/hosts)", kernel: true, deny: []string{"/etc/hosts"}},
		{rule: "Read(~/.ssh/**)", kernel: true, deny: []string{"/home/u/.ssh/**"}},
		{rule: "Read(./src/**/*.pem)", kernel: true, deny: []string{ws + "/src/**/*.pem"}},
		{rule: "Read(./a**b)", kernel: true, deny: []string{ws + "/a*b", ws + "/a*/**/*b"}},
		{rule: "Read(./x[1])", kernel: true, deny: []string{ws + `/x\[1]`}},
		{rule: "Read(//**)", note: "workspace itself"},
		{rule: "Read", note: "nothing"},
		{rule: "Grep(./src/**)", note: "Grep tool only"},
		{rule: "Edit(./.github/workflows/**)", kernel: true, protected: []string{".github/workflows"}},
		{rule: "Write(./Makefile)", kernel: true, protected: []string{"Makefile"}},
		{rule: "Edit(.env)", kernel: true, protected: []string{"**/.env"}, note: "refused by the create guard"},
		{rule: "Edit(./ci/*.yml)", kernel: true, protected: []string{"ci/*.yml"}, note: "end-of-run check moves it aside"},
		{rule: "Edit(//etc/passwd)", kernel: true, note: "outside the workspace"},
		{rule: "Edit", kernel: true, note: "read-only workspace"},
		{rule: "Edit(./**)", kernel: true, note: "read-only workspace"},
		{rule: "Net", kernel: true, note: "network none"},
		{rule: "Net(127.0.0.1:8080)", kernel: true, netDeny: []string{"127.0.0.1:8080"}},
		{rule: "Net([2001:db8::1]:443)", kernel: true, netDeny: []string{"[2001:db8::1]:443"}},
		{rule: "Net(2001:db8::2)", kernel: true, netDeny: []string{"[2001:db8::2]"}},
		{rule: "Net(*.evil.example:443)", kernel: true, netDeny: []string{"*.evil.example:443"}, note: "learnt elsewhere"},
		{rule: "Net(evil.example:443)", kernel: true, netDeny: []string{"evil.example:443"}, note: "when the run starts"},
		{rule: "WebFetch(domain:evil.example)", kernel: true, netDeny: []string{"evil.example"}, note: "not answered"},
		{rule: "Net(*.com)", note: "cannot hold"},
		{rule: "WebFetch", note: "WebFetch tool only"},
		{rule: "Bash", note: "refuses each"},
		{rule: "Bash(git push:*)", note: "arguments or flags of git"},
		{rule: "Bash(rm -rf:*)", note: "arguments or flags of rm"},
		{rule: "Bash(* --force)", note: "wildcard"},
		{rule: "Bash(./build.sh)", note: "arguments or flags"},
		{rule: "mcp__github__create_issue", note: "tool calls"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			overlay, report := KernelRules(ruleSet(t, ws, tt.rule), ws)
			if len(report) != 1 {
				t.Fatalf("report %+v, want one entry", report)
			}
			e := report[0]
			if e.Rule != "deny "+tt.rule || e.Kernel != tt.kernel {
				t.Errorf("report %+v: want rule %q kernel %v", e, "deny "+tt.rule, tt.kernel)
			}
			if !strings.Contains(e.Mechanism+" "+e.Note, tt.note) {
				t.Errorf("report %+v does not say %q", e, tt.note)
			}
			if !e.Kernel && (e.Mechanism != "" || !strings.HasPrefix(e.Note, "gate only: ")) {
				t.Errorf("gate-only report %+v: want no mechanism and a note starting \"gate only: \"", e)
			}
			if !slices.Equal(overlay.Filesystem.Deny, tt.deny) {
				t.Errorf("filesystem.deny %q, want %q", overlay.Filesystem.Deny, tt.deny)
			}
			if !slices.Equal(overlay.Filesystem.Protected, tt.protected) {
				t.Errorf("filesystem.protected %q, want %q", overlay.Filesystem.Protected, tt.protected)
			}
			if !slices.Equal(overlay.Network.Deny, tt.netDeny) {
				t.Errorf("network.deny %q, want %q", overlay.Network.Deny, tt.netDeny)
			}
			if !slices.Equal(overlay.Enforced, report) {
				t.Errorf("overlay.Enforced %+v, want the report", overlay.Enforced)
			}
		})
	}
}

// Expired rules and ask and allow rules are not in the report, and add
// nothing to the overlay.
func TestKernelRulesSkips(t *testing.T) {
	ws := t.TempDir()
	set := ruleSet(t, ws, "ask Read(./a)", "allow Read(./b)")
	old, err := rules.NewRule(rules.Deny, "Read(./c)", rules.Workspace, rules.Base{Root: ws, Cwd: ws})
	if err != nil {
		t.Fatal(err)
	}
	old.Expires = time.Now().Add(-time.Minute)
	overlay, report := KernelRules(set.With(old), ws)
	if len(report) != 0 || len(overlay.Filesystem.Deny) != 0 {
		t.Errorf("report %+v, deny %q: want nothing", report, overlay.Filesystem.Deny)
	}
}

// The overlay merged onto the workspace preset is a valid profile whose
// fingerprint changes with the rules.
func TestKernelRulesMergeIntoProfile(t *testing.T) {
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".github", "workflows"), 0o755); err != nil {
		t.Fatal(err)
	}
	base := profile.Preset(profile.DefaultPreset)
	base.Workspace = ws
	plain, err := profile.New(base)
	if err != nil {
		t.Fatal(err)
	}
	overlay, _ := KernelRules(ruleSet(t, ws, "Read(./.env)", "Edit(./.github/workflows/**)", "Read(//**)"), ws)
	p, err := profile.New(profile.Merge(base, overlay))
	if err != nil {
		t.Fatalf("profile.New of the merged overlay: %v", err)
	}
	if p.Fingerprint() == plain.Fingerprint() {
		t.Error("the rules do not change the fingerprint")
	}
	if !slices.Contains(p.Spec().Filesystem.Deny, filepath.Join(ws, ".env")) {
		t.Errorf("deny %q lacks the workspace's .env", p.Spec().Filesystem.Deny)
	}
	if len(p.Spec().Enforced) != 3 {
		t.Errorf("enforced %+v, want three rules", p.Spec().Enforced)
	}
}

// Bash(PROG:*) masks every name of the program's file in the program
// directories, and the name where it is absent; a name of a multi-call
// binary is left to the gate.
func TestKernelRulesPrograms(t *testing.T) {
	ws := t.TempDir()
	bin := t.TempDir()
	write := func(name string) string {
		p := filepath.Join(bin, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tool := write("airlocktool-1.2")
	if err := os.Link(tool, filepath.Join(bin, "airlocktool")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("airlocktool-1.2", filepath.Join(bin, "airlocktool1")); err != nil {
		t.Fatal(err)
	}
	box := write("airlockbox")
	for _, n := range []string{"airlockrm", "airlockls"} {
		if err := os.Link(box, filepath.Join(bin, n)); err != nil {
			t.Fatal(err)
		}
	}
	old := programDirs
	programDirs = append([]string{bin}, old...)
	t.Cleanup(func() { programDirs = old })

	overlay, report := KernelRules(ruleSet(t, ws, "Bash(airlocktool1:*)"), ws)
	for _, want := range []string{filepath.Join(bin, "airlocktool"), tool, "/usr/bin/airlocktool1"} {
		if !slices.Contains(overlay.Filesystem.Deny, want) {
			t.Errorf("deny %q lacks %s (%+v)", overlay.Filesystem.Deny, want, report)
		}
	}
	if !report[0].Kernel {
		t.Errorf("report %+v: want kernel", report[0])
	}

	overlay, report = KernelRules(ruleSet(t, ws, "Bash(airlockrm *)"), ws)
	if report[0].Kernel || !strings.Contains(report[0].Note, "multi-call") || len(overlay.Filesystem.Deny) != 0 {
		t.Errorf("a multi-call name: report %+v, deny %q; want gate only, nothing masked", report[0], overlay.Filesystem.Deny)
	}
	if _, report = KernelRules(ruleSet(t, ws, "Bash(rm:*)"), ws); !report[0].Kernel || !strings.Contains(report[0].Mechanism, "/usr/bin/rm") {
		t.Errorf("Bash(rm:*): %+v, want /usr/bin/rm masked", report[0])
	}
}
