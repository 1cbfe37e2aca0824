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
}

// parseTestRule reads "[LAYER:] EFFECT MATCH [until RFC3339]", with the
// fixed paths in MATCH made real.
func parseTestRule(dirs testDirs, s string) (*rules.Rule, error) {
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
	r, err := rules.NewRule(rules.Effect(effect), dirs.real(match), layer, dirs.base())
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

func loadCases(t *testing.T) []goldenCase {
	t.Helper()
	var f struct {
		Case []goldenCase `toml:"case"`
	}
	md, err := toml.DecodeFile("testdata/cases.toml", &f)
	if err != nil {
		t.Fatal(err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		t.Fatalf("testdata/cases.toml: unknown keys %v", und)
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
	var rs []*rules.Rule
	for _, s := range c.Rules {
		r, err := parseTestRule(dirs, s)
		if err != nil {
			t.Fatalf("case %q: rule %q: %v", c.Name, s, err)
		}
		rs = append(rs, r)
	}
	e := &Evaluator{Profile: prof, Rules: rules.NewSet(rs), Now: func() time.Time { return testNow }}
	dec, _ := e.Decide(context.Background(), tool.Call{
		Tool: c.Tool, Input: json.RawMessage(dirs.real(string(toolInput(c.Tool, c.Input)))),
		Workspace: dirs.ws, Home: dirs.home, Cwd: dirs.real(c.Cwd),
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
		steps[i] = st
	}
	dec.Requirements = steps
	return dec
}

func formatCase(c goldenCase, d Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n", c.Name)
	fmt.Fprintf(&b, "profile:  %s\n", c.Profile)
	for i, r := range c.Rules {
		label := "rules:   "
		if i > 0 {
			label = "         "
		}
		fmt.Fprintf(&b, "%s %s\n", label, r)
	}
	fmt.Fprintf(&b, "call:     %s %s\n", c.Tool, toolInput(c.Tool, c.Input))
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
		fmt.Fprintf(&b, "  %-60s %-6s %s\n", strings.ReplaceAll(st.Requirement.String(), string(tool.Hole), "?"), st.Access, how)
	}
	return b.String()
}

func TestGoldenDecisions(t *testing.T) {
	cases := loadCases(t)
	dirs := newTestDirs(t)
	profiles := testProfiles(t, dirs)
	var out strings.Builder
	out.WriteString("# Generated by 'go test ./gate -run TestGoldenDecisions -update' from testdata/cases.toml.\n")
	out.WriteString("# Each case: profile × rules × call → decision, and every requirement's\n")
	out.WriteString("# step as: requirement, profile access, outcome by rule [layer].\n\n")
	for _, c := range cases {
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
	path := filepath.Join("testdata", "decisions.golden")
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
