package tool

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/airlockhq/airlock/profile"
)

// Requirement kinds of DESIGN.md section 3. Kinds are open strings: a
// consumer may add its own, and whatever does not know a kind denies it.
// The names are the profile's, which gives each kind its access.
const (
	// KindCommandExecute: run one simple command; the target is its
	// argv-normalised text.
	KindCommandExecute = profile.KindCommandExecute
	// KindFilesystemRead: read a file or tree; the target is an absolute,
	// cleaned path with symlinks resolved where they exist.
	KindFilesystemRead = profile.KindFilesystemRead
	// KindFilesystemWrite: create, change or remove a file or tree.
	KindFilesystemWrite = profile.KindFilesystemWrite
	// KindNetworkConnect: open a connection; the target is host:port.
	KindNetworkConnect = profile.KindNetworkConnect
	// KindToolInvoke: invoke a named tool (mcp__server__tool, WebSearch).
	KindToolInvoke = profile.KindToolInvoke
)

// Hole stands, in [Requirement.Shape], for text that is only known when the
// command runs: a parameter or command expansion, a glob, a directory the
// parser could not follow. U+FFFF is a Unicode noncharacter; literal input
// text never contains it (it is replaced by U+FFFD), so a Hole can only come
// from the preparer.
const Hole = '\uFFFF'

// ErrUnknownTool is returned for a tool that has no preparer. The gate
// denies such calls: what is not understood is not allowed.
var ErrUnknownTool = errors.New("tool: unknown tool")

// ErrInvalidInput is returned when a call's input does not have the fields
// its tool needs.
var ErrInvalidInput = errors.New("tool: invalid input")

// Identity says on whose behalf a call is made. All fields are optional
// and informational: they are recorded, not used to decide.
type Identity struct {
	Agent      string `json:"agent,omitempty"`
	User       string `json:"user,omitempty"`
	Session    string `json:"session,omitempty"`
	Invocation string `json:"invocation,omitempty"`
}

// Call is one tool call of an agent.
type Call struct {
	// Tool is the tool's name in Claude Code's vocabulary ("Bash", "Read",
	// "mcp__github__create_issue", ...).
	Tool string `json:"tool"`
	// Input is the tool's JSON input, with Claude Code's field names.
	Input json.RawMessage `json:"input"`
	// Workspace is the absolute directory the agent works in.
	Workspace string `json:"workspace"`
	// Identity says who asks; it is recorded, not decided on.
	Identity Identity `json:"identity,omitzero"`
	// ExecutionID names the one execution this call becomes; grants are
	// bound to it.
	ExecutionID string `json:"execution_id,omitempty"`
	// Cwd is the directory the call runs in. Empty means Workspace;
	// a relative Cwd is taken against Workspace.
	Cwd string `json:"cwd,omitempty"`
	// Home is the directory "~" stands for. Empty means the current
	// user's home directory ($HOME).
	Home string `json:"home,omitempty"`
}

// Requirement is one thing a call needs: a kind and a target, plus what
// the preparer knows about how exact that target is.
type Requirement struct {
	Kind   string `json:"kind"`
	Target string `json:"target"`
	// Tool is the tool whose call produced the requirement. Rules such as
	// a bare "Glob" or "WebFetch" match only requirements of that tool.
	Tool string `json:"tool,omitempty"`
	// Shape is Target with every part that is only known at run time
	// replaced by a [Hole]. It is empty when Target is exact. A rule's
	// literal text never matches a Hole, so an allow rule cannot reach
	// across an expansion; deny and ask rules treat a Hole as "could be
	// anything" and match it.
	Shape string `json:"-"`
	// Argv is a command's words after quote removal; a word with an
	// expansion appears as its source text.
	Argv []string `json:"argv,omitempty"`
	// Via names what brought the requirement in when it is not the call
	// itself: a wrapper ("sudo", "xargs", "bash -c"), a redirection (">"),
	// or a command reading or writing an operand ("cat", "tee").
	Via string `json:"via,omitempty"`
	// Unresolved marks a path that could not be made absolute (relative
	// to a directory the parser could not follow) or contains an
	// expansion. It is never allowed by a rule or by the profile.
	Unresolved bool `json:"unresolved,omitempty"`
	// Unparsed marks a command the shell parser rejected. Target is the
	// raw text. It is never allowed without asking.
	Unparsed bool `json:"unparsed,omitempty"`
	// Args is the JSON object of arguments of an MCP tool's tool.invoke,
	// for rules with argument patterns (mcp__server__tool(ARG:GLOB)).
	Args string `json:"-"`
	// Canon is a command's canonical form (package shell, canon.go), which rules
	// are compared with; nil when its program is only known at run time.
	Canon *CommandForm `json:"-"`
	// Tree marks a read or write of a directory together with everything
	// beneath it (Grep, Glob, grep -r, tar c, cp -r): a rule about any
	// path inside the directory is about the requirement too.
	Tree bool `json:"tree,omitempty"`
	// Names are the other names of Target the call used: the path as
	// written and as it read after each symlink on the way was followed
	// (tool/paths.go). Deny and ask rules are checked against each.
	Names []string `json:"names,omitempty"`
	// Unseen names state the gate cannot see that decides what a
	// command does (the scripts of a package.json, a program's text, a
	// repository's hooks and configuration): the gate decides the
	// command as written, and only the sandbox bounds what that state
	// makes it run. The decision's reason says so.
	Unseen string `json:"unseen,omitempty"`
	// Invalid says why the target cannot be judged at all (a host that
	// fails normalisation, a path with a control character). The gate
	// denies such a requirement.
	Invalid string `json:"invalid,omitempty"`
}

// Exact reports whether the requirement's target is fully known: no Hole,
// not unresolved, not unparsed, and for a command, words its target
// spells without ambiguity. Only exact requirements can be saved as a rule
// by an "always" answer.
func (r Requirement) Exact() bool {
	return r.Shape == "" && !r.Unresolved && !r.Unparsed && r.Invalid == "" && !r.ambiguousWords()
}

// ambiguousWords reports a command whose target does not say where its
// words begin and end. The target joins the words with spaces, so
// `rm "a b"` (one file) and `rm a b` (two) share the text "rm a b": a rule
// saved from the first would allow the second. The same holds for an
// empty word and for assignments before the command, which are not in
// Argv. Such a command is approved once, never saved.
func (r Requirement) ambiguousWords() bool {
	if r.Kind != KindCommandExecute || r.Argv == nil {
		return false
	}
	for _, w := range r.Argv {
		if w == "" || strings.ContainsAny(w, " \t\n\v\f\r") {
			return true
		}
	}
	return r.Target != strings.Join(r.Argv, " ")
}

// MatchText is the text rules match against: Shape when the target has
// holes, Target otherwise.
func (r Requirement) MatchText() string {
	if r.Shape != "" {
		return r.Shape
	}
	return r.Target
}

func (r Requirement) String() string {
	s := r.Kind + " " + r.Target
	var flags []string
	if r.Shape != "" {
		flags = append(flags, "dynamic")
	}
	if r.Unresolved {
		flags = append(flags, "unresolved")
	}
	if r.Unparsed {
		flags = append(flags, "unparsed")
	}
	if r.Invalid != "" {
		flags = append(flags, "invalid")
	}
	if r.Via != "" {
		flags = append(flags, "via "+r.Via)
	}
	if len(flags) > 0 {
		s += " (" + strings.Join(flags, ", ") + ")"
	}
	return s
}

// PrepareFunc derives the requirements of one call of a tool.
type PrepareFunc func(call Call) ([]Requirement, error)

// Preparers maps tool names to their preparers. Names starting with
// "mcp__" that are not in the map are prepared as MCP tools.
type Preparers map[string]PrepareFunc

// builtin is the registry of Claude Code's tools, built at init.
var builtin = Preparers{
	"Bash":         prepareBash,
	"Read":         preparePathField(KindFilesystemRead, "file_path"),
	"Write":        preparePathField(KindFilesystemWrite, "file_path"),
	"Edit":         preparePathField(KindFilesystemWrite, "file_path"),
	"MultiEdit":    preparePathField(KindFilesystemWrite, "file_path"),
	"NotebookEdit": preparePathField(KindFilesystemWrite, "notebook_path"),
	"NotebookRead": preparePathField(KindFilesystemRead, "notebook_path"),
	"LS":           preparePathField(KindFilesystemRead, "path"),
	"Glob":         prepareSearch,
	"Grep":         prepareSearch,
	"WebFetch":     prepareWebFetch,
	"WebSearch":    prepareNamedTool,
	"Task":         prepareNamedTool,
	"TodoWrite":    prepareNamedTool,

	"Monitor":                prepareMonitor,
	"PowerShell":             preparePowerShell,
	"ReadMcpResourceTool":    prepareMCPResource,
	"ReadMcpResourceDirTool": prepareMCPResource,
	"ListMcpResourcesTool":   prepareMCPResource,
}

// Builtin returns a copy of the built-in preparers, for a consumer that
// adds its own tools.
func Builtin() Preparers {
	p := make(Preparers, len(builtin))
	for k, v := range builtin {
		p[k] = v
	}
	return p
}

// Prepare derives the requirements of call with the built-in preparers.
func Prepare(call Call) ([]Requirement, error) { return builtin.Prepare(call) }

// Prepare derives the requirements of call. A tool with no preparer is an
// error wrapping [ErrUnknownTool]. Every requirement's Tool is set to the
// call's tool.
func (p Preparers) Prepare(call Call) ([]Requirement, error) {
	f, ok := p[call.Tool]
	if !ok && isMCPName(call.Tool) {
		f, ok = prepareMCPTool, true
	}
	if !ok {
		return nil, fmt.Errorf("%w %q: no preparer knows its requirements", ErrUnknownTool, call.Tool)
	}
	reqs, err := f(call)
	if err != nil {
		return nil, err
	}
	for i := range reqs {
		reqs[i].Tool = call.Tool
	}
	return reqs, nil
}

// isMCPName reports whether name has the form mcp__server__tool.
func isMCPName(name string) bool {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return false
	}
	server, tool, ok := strings.Cut(rest, "__")
	return ok && server != "" && tool != ""
}
