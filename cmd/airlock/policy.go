package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/airlockhq/airlock/gate"
	"github.com/airlockhq/airlock/internal/cli"
	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/tool"
	"github.com/airlockhq/airlock/workspace"
)

const policyUsage = `Usage: airlock policy COMMAND [FLAGS]

Commands:
  explain   decide one tool call and say why (nothing runs, no one is asked)
  test      run the inline examples ([[rule.example]]) of a rule file
  list      show the effective rules of every layer and flag those that never fire

Run 'airlock policy COMMAND --help' for the flags of one command.
`

// runPolicy is "airlock policy". Exit status: 0 done (for test: every
// example passed), 1 a rule file is broken or an example failed, 125 usage.
func runPolicy(args []string, stdout, stderr io.Writer) int {
	return cli.RunGroup("policy", policyUsage, map[string]cli.CommandFunc{
		"explain": policyExplain, "test": policyTest, "list": policyList,
	}, args, stdout, stderr)
}

// sourceFlags are the flags that say where rules come from.
type sourceFlags struct {
	workspace, managed, user string
	noClaude                 bool
}

func (s *sourceFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.workspace, "workspace", "", "the workspace `DIR` (default: the current directory)")
	fs.StringVar(&s.managed, "managed", "", "the managed layer's rule `FILE` (default "+rules.DefaultManagedPath+"; - for none)")
	fs.StringVar(&s.user, "user", "", "the user layer's rule `FILE` (default ~/.config/airlock/policy.toml; - for none)")
	fs.BoolVar(&s.noClaude, "no-claude", false, "do not read .claude/settings.json and .claude/settings.local.json")
}

// overrides turns the flags into the workspace's Overrides; the
// workspace is the current directory unless --workspace names one.
func (s *sourceFlags) overrides() (workspace.Overrides, error) {
	ws := s.workspace
	if ws == "" {
		wd, err := os.Getwd()
		if err != nil {
			return workspace.Overrides{}, err
		}
		ws = wd
	}
	ws, err := filepath.Abs(ws)
	if err != nil {
		return workspace.Overrides{}, err
	}
	return workspace.Overrides{Workspace: ws, Managed: s.managed, User: s.user, NoClaude: s.noClaude}, nil
}

func policyExplain(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("airlock policy explain", `Usage: airlock policy explain --tool NAME --input JSON [FLAGS]

Decides one tool call as the gate would, without running it or asking
anyone, and prints the decision (allow, ask or deny), the reason, the rule
and layer that decided it, and every requirement the call has.

Flags:
`, stdout, stderr)
	var src sourceFlags
	src.register(fs)
	toolName := fs.String("tool", "", "the tool `NAME`, e.g. Bash, Read, mcp__github__create_issue")
	input := fs.String("input", "", "the tool's `JSON` input, e.g. '{\"command\":\"git push\"}'")
	preset := fs.String("profile", "", "the profile `PRESET` or file whose access is step 1 (default: the workspace's own, as airlock run builds it)")
	autoAllow := fs.Bool("auto-allow-in-sandbox", false, "let the profile allow commands (they run in the sandbox)")
	sandboxed := fs.Bool("sandboxed", false, "decide the call as a surface that runs it in the sandbox does (airlock mcp serve, the hook's sandboxed Bash): a command no rule mentions is allowed unless the profile sets auto_allow_in_sandbox = false, and a tree read is left to the masks")
	cwd := fs.String("cwd", "", "the `DIR` the call runs in (default: the workspace)")
	asJSON := fs.Bool("json", false, "print the decision as JSON")
	if code := cli.ParseFlags(fs, args, exitUsage, stdout, stderr); code >= 0 {
		return code
	}
	if *toolName == "" || *input == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "airlock policy explain: --tool and --input are required, and nothing else")
		return exitUsage
	}
	if !json.Valid([]byte(*input)) {
		fmt.Fprintf(stderr, "airlock policy explain: --input is not valid JSON: %s\n", *input)
		return exitUsage
	}
	o, err := src.overrides()
	if err != nil {
		fmt.Fprintln(stderr, "airlock policy explain:", err)
		return 1
	}
	o.Profile = *preset
	if *autoAllow {
		on := true
		o.Layer.AutoAllowInSandbox = &on
	}
	pol, err := workspace.Load(o.Workspace, o)
	if err != nil {
		fmt.Fprintln(stderr, "airlock policy explain:", err)
		return 1
	}
	ev := pol.Evaluator()
	if *sandboxed {
		ev = pol.Evaluator(*toolName)
	}
	// Claude Code's tools that are not gated (Agent, TodoWrite, ...) are
	// one tool.invoke of their name, as for the hook and /v1/decide, so a
	// rule naming one decides it here too.
	ev.Preparers = tool.ClaudeCodePreparers(ev.Preparers, *toolName)
	call := tool.Call{Tool: *toolName, Input: json.RawMessage(*input), Workspace: pol.Workspace, Cwd: *cwd}
	d, decideErr := ev.Decide(context.Background(), call)
	note := classNote(*toolName, d)
	if *asJSON {
		out := struct {
			gate.Decision
			Note  string `json:"note,omitempty"`
			Error string `json:"error,omitempty"`
		}{Decision: d, Note: note}
		if decideErr != nil {
			out.Error = decideErr.Error()
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			fmt.Fprintln(stderr, "airlock policy explain:", err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(stdout, "decision: %s\nreason:   %s\n", d.Effect, d.Reason)
	if d.Rule != "" {
		fmt.Fprintf(stdout, "rule:     %s (%s layer, %s)\n", d.Rule, d.Layer, d.Source)
	} else if d.Layer != "" {
		fmt.Fprintf(stdout, "layer:    %s\n", d.Layer)
	}
	if note != "" {
		fmt.Fprintf(stdout, "note:     %s\n", note)
	}
	if len(d.Requirements) > 0 {
		fmt.Fprintln(stdout, "requirements:")
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		for _, st := range d.Requirements {
			how := string(st.Effect)
			if how == "" {
				how = "-"
			}
			if st.Rule != "" {
				how += " by " + st.Rule + " (" + st.Layer + ")"
			} else if st.Layer != "" {
				how += " by " + st.Layer
			}
			req := st.Requirement.String()
			if st.Tree {
				req += " [everything beneath]"
			}
			fmt.Fprintf(tw, "  %s\tprofile %s\t%s\n", strings.ReplaceAll(req, string(tool.Hole), "?"), st.Access, how)
			for _, n := range st.Names {
				fmt.Fprintf(tw, "    also named %s\t\t\n", n)
			}
		}
		tw.Flush()
	}
	return 0
}

func policyTest(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("airlock policy test", `Usage: airlock policy test [FLAGS] FILE

Runs the inline examples of the rule file FILE:

  [[rule]]
  effect = "deny"
  match  = "Bash(git push *)"
  [[rule.example]]
  input  = "git push origin main"   # the tool's JSON, or its main field
  expect = "deny"                   # allow | ask | deny
  [[rule.example]]
  tool   = "Bash"                   # default: the rule's tool
  input  = '{"command": "git pull"}'
  expect = "ask"

Each example is decided by the rules of FILE alone, with every requirement
Gated, so "ask" means no rule of the file allows it. The exit status is 1
when an example fails.

Flags:
`, stdout, stderr)
	workspace := fs.String("workspace", "", "the `DIR` relative paths in rules are taken against (default: the directory above FILE's .airlock/, else the current directory)")
	if code := cli.ParseFlags(fs, args, exitUsage, stdout, stderr); code >= 0 {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "airlock policy test: give exactly one rule FILE")
		return exitUsage
	}
	path := fs.Arg(0)
	ws, err := testWorkspace(path, *workspace)
	if err != nil {
		fmt.Fprintln(stderr, "airlock policy test:", err)
		return 1
	}
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(stderr, "airlock policy test:", err)
		return 1
	}
	home, _ := os.UserHomeDir()
	var rs []*rules.Rule
	if strings.HasSuffix(path, ".json") {
		rs, err = rules.ParseClaudeSettings(data, path, rules.Workspace, rules.Base{Root: ws, Cwd: ws, Home: home})
	} else {
		rs, err = rules.ParseFile(data, path, rules.Workspace, rules.Base{Root: ws, Cwd: ws, Home: home})
	}
	if err != nil {
		fmt.Fprintln(stderr, "airlock policy test:", err)
		return 1
	}
	ev := &gate.Evaluator{Rules: rules.NewSet(rs)}
	pass, fail := 0, 0
	for _, r := range rs {
		for _, ex := range r.Examples {
			call := tool.Call{Tool: ex.Tool, Input: json.RawMessage(ex.Input), Workspace: ws, Home: home}
			d, _ := ev.Decide(context.Background(), call)
			where := fmt.Sprintf("%s:%d", path, ex.Line)
			if d.Effect == ex.Expect {
				pass++
				fmt.Fprintf(stdout, "ok    %s: %s %s → %s\n", where, ex.Tool, ex.Input, d.Effect)
				continue
			}
			fail++
			fmt.Fprintf(stdout, "FAIL  %s: %s %s → %s, want %s\n      rule %s; %s\n", where, ex.Tool, ex.Input, d.Effect, ex.Expect, r.Match, d.Reason)
		}
	}
	fmt.Fprintf(stdout, "%d passed, %d failed\n", pass, fail)
	if fail > 0 {
		return 1
	}
	return 0
}

// testWorkspace is the workspace a rule file's relative paths refer to.
func testWorkspace(path, flagValue string) (string, error) {
	if flagValue != "" {
		return filepath.Abs(flagValue)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if dir := filepath.Dir(abs); filepath.Base(dir) == ".airlock" || filepath.Base(dir) == ".claude" {
		return filepath.Dir(dir), nil
	}
	return os.Getwd()
}

func policyList(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("airlock policy list", `Usage: airlock policy list [FLAGS]

Lists the effective rules of every layer (managed, user, workspace, local,
and Claude Code's settings), strongest layer first, and flags the rules
that can never fire: expired, shadowed by a deny (or an allow by an ask),
or unmatchable.

Flags:
`, stdout, stderr)
	var src sourceFlags
	src.register(fs)
	asJSON := fs.Bool("json", false, "print the rules as JSON")
	if code := cli.ParseFlags(fs, args, exitUsage, stdout, stderr); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "airlock policy list: takes no arguments")
		return exitUsage
	}
	o, err := src.overrides()
	if err != nil {
		fmt.Fprintln(stderr, "airlock policy list:", err)
		return 1
	}
	pol, err := workspace.Load(o.Workspace, o)
	if err != nil {
		fmt.Fprintln(stderr, "airlock policy list:", err)
		return 1
	}
	set := pol.Rules
	problems := map[*rules.Rule]rules.Finding{}
	for _, f := range set.Findings(time.Now()) {
		problems[f.Rule] = f
	}
	type listed struct {
		*rules.Rule
		Problem string `json:"problem,omitempty"`
		Detail  string `json:"detail,omitempty"`
	}
	var out []listed
	for _, r := range set.Rules() {
		l := listed{Rule: r}
		if f, ok := problems[r]; ok {
			l.Problem, l.Detail = f.Problem, f.Detail
		}
		out = append(out, l)
	}
	if *asJSON {
		if out == nil {
			out = []listed{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			return 1
		}
		return 0
	}
	if len(out) == 0 {
		fmt.Fprintln(stdout, "no rules; files read (missing ones are skipped):")
		for _, f := range workspace.RuleSources(pol.Workspace, o) {
			fmt.Fprintf(stdout, "  %-9s %s\n", f.Layer, f.Path)
		}
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LAYER\tEFFECT\tRULE\tSOURCE\tNOTE")
	for _, l := range out {
		note := ""
		if !l.Expires.IsZero() {
			note = "expires " + l.Expires.Format(time.RFC3339)
		}
		if l.Problem != "" {
			note = "NEVER FIRES (" + l.Problem + "): " + l.Detail
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", l.Layer, l.Effect, l.Match, l.Where(), note)
	}
	tw.Flush()
	return 0
}

// classNote says how the hook and /v1/decide take a gate decision of a
// Claude Code tool that is not gated, where no rule names it: explain
// shows the gate's answer, which those surfaces then weigh by the tool's
// class (tool.ClaudeCode).
func classNote(name string, d gate.Decision) string {
	if d.Effect != rules.Ask || d.Rule != "" {
		return ""
	}
	switch tool.ClaudeCode(name).Class {
	case tool.ClassOrchestration:
		return "no rule names " + name + ", which steers the agent itself: the Claude Code hook leaves it to Claude Code's permissions and /v1/decide allows it"
	case tool.ClassUnknown:
		return "airlock does not know " + name + " yet, so a person decides; a rule naming it allows or denies it"
	case tool.ClassOpaque:
		return name + " does what airlock cannot see, so a person decides; a rule naming it allows or denies it"
	}
	return ""
}
