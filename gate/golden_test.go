package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/BurntSushi/toml"

	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/tool"
)

var update = flag.Bool("update", false, "rewrite testdata/decisions.golden from the current decisions")

// Golden decision tables: testdata/cases.toml holds profile × rules × call
// cases (some with a hand-written "want"), testdata/decisions.golden the
// full decision of each, for a person to review. Both are written with the
// fixed paths /ws and /home/u (see testDirs); the decisions are made over
// real directories.

var testNow = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

type goldenCase struct {
	Name    string   `toml:"name"`
	Profile string   `toml:"profile"`
	Rules   []string `toml:"rules"`
	Tool    string   `toml:"tool"`
	Input   string   `toml:"input"`
	Cwd     string   `toml:"cwd"`
	Want    string   `toml:"want"`
	Rule    string   `toml:"rule"`
	// Setup makes files before the case is decided, in a workspace and
	// home of the case's own (see setupCase).
	Setup []string `toml:"setup"`
	// Workspace is the call's workspace when it is not /ws (a symlink to
	// it that setup made, say).
	Workspace string `toml:"workspace"`
	// Sandboxed says the call runs in the sandbox of its profile (a
	// gate.Confinement of its tool), as mcp serve and the hook's sandbox
	// rewrite decide; Masked lists the rules (by match) that sandbox
	// masks.
	Sandboxed bool     `toml:"sandboxed"`
	Masked    []string `toml:"masked"`
}

// parseTestRule reads "[LAYER:] EFFECT MATCH [until RFC3339]", with the
// fixed paths in MATCH made real.
func parseTestRule(dirs testDirs, base rules.Base, s string) (*rules.Rule, error) {
	layer := rules.Workspace
	for _, l := range rules.Layers() {
		if rest, ok := strings.CutPrefix(s, string(l)+": "); ok {
			layer, s = l, rest
		}
	}
	var expires time.Time
	if i := strings.LastIndex(s, " until "); i >= 0 {
		t, err := time.Parse(time.RFC3339, s[i+len(" until "):])
		if err != nil {
			return nil, err
		}
		s, expires = s[:i], t
	}
	effect, match, _ := strings.Cut(s, " ")
	r, err := rules.NewRule(rules.Effect(effect), dirs.real(match), layer, base)
	if err != nil {
		return nil, err
	}
	r.Expires = expires
	return r, nil
}

// toolInput turns a case's input into JSON: JSON as is, otherwise the
// tool's main field.
func toolInput(toolName, input string) json.RawMessage {
	if strings.HasPrefix(input, "{") {
		return json.RawMessage(input)
	}
	field := map[string]string{"Bash": "command", "Read": "file_path", "Write": "file_path",
		"Edit": "file_path", "WebFetch": "url", "Glob": "pattern", "Grep": "pattern"}[toolName]
	if field == "" {
		field = "input"
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep "&&" and ">" readable in the golden file
	_ = enc.Encode(map[string]string{field: input})
	return bytes.TrimSpace(b.Bytes())
}

func loadCases(t *testing.T, file string) []goldenCase {
	t.Helper()
	var f struct {
		Case []goldenCase `toml:"case"`
	}
	path := filepath.Join("testdata", file)
	md, err := toml.DecodeFile(path, &f)
	if err != nil {
		t.Fatal(err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		t.Fatalf("%s: unknown keys %v", path, und)
	}
	return f.Case
}

// decideCase decides c over the real directories of dirs and returns the decision
// with the fixed paths written back.
func decideCase(t *testing.T, dirs testDirs, profiles map[string]ProfileAccess, c goldenCase) Decision {
	t.Helper()
	prof, ok := profiles[c.Profile]
	if !ok {
		t.Fatalf("case %q: unknown profile %q", c.Name, c.Profile)
	}
	// A case with its own workspace (a symlink to /ws) has its rules
	// written there too, as a policy file in it would be.
	base, real := dirs.base(), dirs.real
	if c.Workspace != "" {
		link := dirs.setupPath(c.Workspace)
		base.Root, base.Cwd = link, link
		real = func(s string) string { return replacePathName(dirs.real(s), c.Workspace, link) }
	}
	var rs []*rules.Rule
	for _, s := range c.Rules {
		r, err := parseTestRule(dirs, base, s)
		if err != nil {
			t.Fatalf("case %q: rule %q: %v", c.Name, s, err)
		}
		rs = append(rs, r)
	}
	e := &Evaluator{Profile: prof, Rules: rules.NewSet(rs), Now: func() time.Time { return testNow }}
	if c.Sandboxed {
		masked := map[string]bool{}
		for _, m := range c.Masked {
			masked[dirs.real(m)] = true
		}
		e.Sandbox = &Confinement{Tools: []string{c.Tool}, Masked: func(r *rules.Rule) bool { return masked[r.Match] }}
	}
	dec, _ := e.Decide(context.Background(), tool.Call{
		Tool: c.Tool, Input: json.RawMessage(real(string(toolInput(c.Tool, c.Input)))),
		Workspace: base.Cwd, Home: dirs.home, Cwd: real(c.Cwd),
	})
	dec.Reason, dec.Rule = dirs.fixed(dec.Reason), dirs.fixed(dec.Rule)
	if dec.Requirement != nil {
		r := *dec.Requirement
		r.Target = dirs.fixed(r.Target)
		dec.Requirement = &r
	}
	steps := make([]Step, len(dec.Requirements))
	for i, st := range dec.Requirements {
		st.Target, st.Shape, st.Rule = dirs.fixed(st.Target), dirs.fixed(st.Shape), dirs.fixed(st.Rule)
		names := make([]string, len(st.Names))
		for i, n := range st.Names {
			names[i] = dirs.fixed(n)
		}
		st.Names = names
		steps[i] = st
	}
	dec.Requirements = steps
	return dec
}

func formatCase(c goldenCase, d Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n", c.Name)
	fmt.Fprintf(&b, "profile:  %s\n", c.Profile)
	if c.Sandboxed {
		masks := "the profile's deny entries"
		if len(c.Masked) > 0 {
			masks += " and the paths of " + strings.Join(c.Masked, ", ")
		}
		fmt.Fprintf(&b, "sandbox:  runs the call, masking %s\n", masks)
	}
	for i, r := range c.Rules {
		label := "rules:   "
		if i > 0 {
			label = "         "
		}
		fmt.Fprintf(&b, "%s %s\n", label, r)
	}
	fmt.Fprintf(&b, "call:     %s %s\n", c.Tool, printable(string(toolInput(c.Tool, c.Input))))
	fmt.Fprintf(&b, "decision: %s\n", d.Effect)
	fmt.Fprintf(&b, "reason:   %s\n", d.Reason)
	if d.Rule != "" {
		fmt.Fprintf(&b, "rule:     %s [%s]\n", d.Rule, d.Layer)
	} else if d.Layer != "" {
		fmt.Fprintf(&b, "layer:    %s\n", d.Layer)
	}
	for _, st := range d.Requirements {
		how := string(st.Effect)
		if how == "" {
			how = "-"
		}
		if st.Rule != "" {
			how += " by " + st.Rule + " [" + st.Layer + "]"
		} else if st.Layer != "" {
			how += " by " + st.Layer
		}
		req := st.Requirement.String()
		if st.Tree {
			req += " [tree]"
		}
		fmt.Fprintf(&b, "  %-60s %-6s %s\n", printable(strings.ReplaceAll(req, string(tool.Hole), "?")), st.Access, how)
		for _, n := range st.Names {
			fmt.Fprintf(&b, "    also named %s\n", n)
		}
	}
	return b.String()
}

// goldenSets are the case files and their golden decisions: the gate's
// own cases, and reviewer.toml, the classes a careful reviewer decides
// (issue 20: options that act, programs' own spellings, ordinary work,
// what the gate cannot see).
var goldenSets = []struct{ cases, golden string }{
	{"cases.toml", "decisions.golden"},
	{"reviewer.toml", "reviewer.golden"},
}

func TestGoldenDecisions(t *testing.T) {
	for _, set := range goldenSets {
		t.Run(set.cases, func(t *testing.T) { goldenDecisions(t, set.cases, set.golden) })
	}
}

func goldenDecisions(t *testing.T, casesFile, goldenFile string) {
	cases := loadCases(t, casesFile)
	dirs := newTestDirs(t)
	profiles := testProfiles(t, dirs)
	var out strings.Builder
	out.WriteString("# Generated by 'go test ./gate -run TestGoldenDecisions -update' from testdata/" + casesFile + ".\n")
	out.WriteString("# Each case: profile × rules × call → decision, and every requirement's\n")
	out.WriteString("# step as: requirement, profile access, outcome by rule [layer].\n\n")
	for _, c := range cases {
		dirs, profiles := dirs, profiles
		if len(c.Setup) > 0 || c.Workspace != "" {
			dirs = newTestDirs(t)
			setupCase(t, dirs, c)
			profiles = testProfiles(t, dirs)
		}
		dec := decideCase(t, dirs, profiles, c)
		if c.Want != "" && string(dec.Effect) != c.Want {
			t.Errorf("case %q: decision %s, want %s (reason: %s)", c.Name, dec.Effect, c.Want, dec.Reason)
		}
		if c.Rule != "" && dec.Rule != c.Rule {
			t.Errorf("case %q: rule %q, want %q", c.Name, dec.Rule, c.Rule)
		}
		out.WriteString(formatCase(c, dec))
		out.WriteString("\n")
	}
	path := filepath.Join("testdata", goldenFile)
	if *update {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got := out.String(); got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("decisions differ from %s at line %d:\n got: %s\nwant: %s\n(run with -update after reviewing)", path, i+1, g, w)
			}
		}
	}
}

// setupCase carries out a case's setup lines, each one of
//
//	dir PATH             a directory (and its parents)
//	file PATH [TEXT]     a file holding TEXT
//	link PATH -> TARGET  a symlink; TARGET is written as given, with /ws
//	                     and /home/u made real
//
// PATH is /ws/..., /home/u/... or another absolute path, which is made
// beside those two (so /wslink can be a link to /ws).
func setupCase(t *testing.T, d testDirs, c goldenCase) {
	t.Helper()
	for _, line := range c.Setup {
		verb, rest, _ := strings.Cut(line, " ")
		var err error
		switch verb {
		case "dir":
			err = os.MkdirAll(d.setupPath(rest), 0o755)
		case "file":
			path, text, _ := strings.Cut(rest, " ")
			p := d.setupPath(path)
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				err = os.WriteFile(p, []byte(d.real(text)), 0o644)
			}
		case "link":
			path, target, ok := strings.Cut(rest, " -> ")
			if !ok {
				t.Fatalf("case %q: setup %q: write link PATH -> TARGET", c.Name, line)
			}
			p := d.setupPath(path)
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				err = os.Symlink(d.real(target), p)
			}
		default:
			t.Fatalf("case %q: setup %q: unknown verb %q", c.Name, line, verb)
		}
		if err != nil {
			t.Fatalf("case %q: setup %q: %v", c.Name, line, err)
		}
	}
}

// setupPath makes a setup path real: /ws and /home/u as everywhere, any
// other absolute path beside them.
func (d testDirs) setupPath(p string) string {
	if r := d.real(p); r != p {
		return r
	}
	return filepath.Join(filepath.Dir(d.ws), p)
}

// printable writes control and invisible characters as Go escapes, so
// the golden file shows them instead of carrying them.
func printable(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			fmt.Fprintf(&b, "\\u%04x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
