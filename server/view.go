package server

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/airlockhq/airlock/gate"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/tool"
)

// View is what the approval page shows of a call, computed once when the
// approval opens.
type View struct {
	Summary         string        `json:"summary"`
	Command         *CommandView  `json:"command,omitempty"`
	Fetch           *FetchView    `json:"fetch,omitempty"`
	Diff            string        `json:"diff,omitempty"`
	Network         []string      `json:"network,omitempty"`
	Risks           []Risk        `json:"risks,omitempty"`
	Requirements    []Requirement `json:"requirements"`
	AlwaysRules     []string      `json:"always_rules"`
	AlwaysDenyRules []string      `json:"always_deny_rules"`
	// AlwaysBroader says, one sentence per rule, what the rules an
	// "always" answer saves allow beyond this call (a Net rule allows
	// every connection to the host, not only this URL); the page asks
	// for confirmation before saving them.
	AlwaysBroader []string `json:"always_broader,omitempty"`
}

// FetchView is a WebFetch call: the whole URL, whose path and query are
// where data leaves, and the prompt the fetched page is read with.
type FetchView struct {
	URL    string `json:"url"`
	Prompt string `json:"prompt"`
}

// CommandView is a Bash command and the simple commands the gate found.
type CommandView struct {
	Text  string        `json:"text"`
	Parts []CommandPart `json:"parts"`
}

// CommandPart is one simple command: its words after quote removal, and
// what ran it when not the command line itself (sudo, xargs, bash -c).
type CommandPart struct {
	Argv []string `json:"argv"`
	Via  string   `json:"via,omitempty"`
}

// Requirement is one requirement waiting for an answer.
type Requirement struct {
	Kind   string `json:"kind"`
	Target string `json:"target"`
	Access string `json:"access"`
	Why    string `json:"why"`
}

// maxDiffFile bounds the file read for a diff.
const maxDiffFile = 256 << 10

func (s *Server) buildView(c tool.Call, req gate.Request, prof gate.ProfileAccess) View {
	v := View{Requirements: []Requirement{}, AlwaysRules: []string{}, AlwaysDenyRules: []string{}}
	for _, p := range req.Pending {
		access := profile.AccessGated
		if prof != nil && !p.Requirement.Unresolved {
			access = prof.Access(p.Requirement.Kind, p.Requirement.Target)
		}
		v.Requirements = append(v.Requirements, Requirement{Kind: p.Requirement.Kind, Target: p.Requirement.Target,
			Access: access.String(), Why: p.Why})
		// The rules an answer saves are the ones the gate saves for
		// "always" (gate.Evaluator's remember): one exact rule per
		// pending requirement that has one, and no allow rule where an
		// ask rule sent it (that rule would still ask).
		if !p.Savable {
			continue
		}
		m, err := rules.ExactMatch(p.Requirement)
		if err != nil {
			continue
		}
		v.AlwaysDenyRules = appendNew(v.AlwaysDenyRules, m)
		if p.Rule == "" {
			v.AlwaysRules = appendNew(v.AlwaysRules, m)
			if b := broader(c, p.Requirement, m); b != "" {
				v.AlwaysBroader = appendNew(v.AlwaysBroader, b)
			}
		}
	}
	reqs, _ := s.preparers(c.Tool).Prepare(c)
	for _, r := range reqs {
		if r.Kind == tool.KindNetworkConnect {
			v.Network = appendNew(v.Network, r.Target)
		}
	}
	home := c.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	v.Risks = callRisks(c, reqs, prof, home)
	var in struct {
		URL      string `json:"url"`
		Prompt   string `json:"prompt"`
		Command  string `json:"command"`
		FilePath string `json:"file_path"`
		Content  string `json:"content"`
		Old      string `json:"old_string"`
		New      string `json:"new_string"`
		All      bool   `json:"replace_all"`
		Edits    []struct {
			Old string `json:"old_string"`
			New string `json:"new_string"`
			All bool   `json:"replace_all"`
		} `json:"edits"`
	}
	_ = json.Unmarshal(c.Input, &in) // the gate has checked it; a field missing stays empty
	switch c.Tool {
	case "Bash":
		cv := &CommandView{Text: in.Command, Parts: []CommandPart{}}
		for _, r := range reqs {
			if r.Kind == tool.KindCommandExecute {
				argv := r.Argv
				if argv == nil {
					argv = []string{r.Target}
				}
				cv.Parts = append(cv.Parts, CommandPart{Argv: argv, Via: r.Via})
			}
		}
		v.Command = cv
		v.Summary = in.Command
	case "WebFetch":
		v.Fetch = &FetchView{URL: in.URL, Prompt: in.Prompt}
		v.Summary = in.URL
	case "Write", "Edit", "MultiEdit":
		path := in.FilePath
		if path != "" && !filepath.IsAbs(path) {
			path = filepath.Join(c.Workspace, path)
		}
		old, readable := s.readForDiff(c.Workspace, path, prof)
		var edits []edit
		switch c.Tool {
		case "Write":
		case "Edit":
			edits = []edit{{in.Old, in.New, in.All}}
		case "MultiEdit":
			for _, e := range in.Edits {
				edits = append(edits, edit{e.Old, e.New, e.All})
			}
		}
		newText := in.Content
		if c.Tool != "Write" {
			newText = applyEdits(old, edits)
			if !readable {
				// Without the file, show the replacements themselves.
				var o, n strings.Builder
				for _, e := range edits {
					o.WriteString(withNewline(e.old))
					n.WriteString(withNewline(e.new))
				}
				old, newText = o.String(), n.String()
			}
		}
		v.Diff = unifiedDiff(path, old, newText)
		v.Summary = c.Tool + " " + in.FilePath
	default:
		v.Summary = c.Tool
		if len(reqs) > 0 {
			v.Summary += " " + reqs[0].Target
		}
	}
	if len(v.Summary) > 200 {
		v.Summary = v.Summary[:200] + "…"
	}
	return v
}

// broader says what rule, saved for requirement r of call c, allows
// beyond the call; "" when it allows exactly the call's requirement.
func broader(c tool.Call, r tool.Requirement, rule string) string {
	switch {
	case r.Kind == tool.KindNetworkConnect:
		return fmt.Sprintf("%s allows every connection to %s, by any command or fetch, not only this one", rule, r.Target)
	case r.Kind == tool.KindToolInvoke && len(c.Input) > 0 && string(c.Input) != "{}" && string(c.Input) != "null":
		return fmt.Sprintf("%s allows every call of %s, whatever its input", rule, r.Target)
	}
	return ""
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// readForDiff reads the file an edit changes, to show the change as a
// diff. It reads only inside the workspace, without following a symlink
// anywhere on the way (readBeneath), and only what the profile lets be
// read: an approval's view must not become a way to read other files.
func (s *Server) readForDiff(ws, path string, prof gate.ProfileAccess) (string, bool) {
	if path == "" {
		return "", false
	}
	path = filepath.Clean(path)
	rel, err := filepath.Rel(ws, path)
	if err != nil || !filepath.IsLocal(rel) {
		return "", false
	}
	if prof != nil && prof.Access(tool.KindFilesystemRead, path) == profile.AccessDeny {
		return "", false
	}
	data, ok := readBeneath(ws, rel, maxDiffFile)
	return string(data), ok
}

type edit struct {
	old, new string
	all      bool
}

// applyEdits applies Edit's replacements to text; an old string that is
// not there changes nothing (the tool itself would refuse the call).
func applyEdits(text string, edits []edit) string {
	for _, e := range edits {
		if e.old == "" {
			if text == "" {
				text = e.new
			}
			continue
		}
		if e.all {
			text = strings.ReplaceAll(text, e.old, e.new)
		} else {
			text = strings.Replace(text, e.old, e.new, 1)
		}
	}
	return text
}

// unifiedDiff is a one-hunk unified diff of old and new: the lines between
// their common beginning and end replaced, with up to 3 lines of context.
func unifiedDiff(path, old, new string) string {
	if old == new {
		return ""
	}
	a, b := splitLines(old), splitLines(new)
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	const ctx = 3
	start := max(pre-ctx, 0)
	endA := min(len(a)-suf+ctx, len(a))
	endB := min(len(b)-suf+ctx, len(b))
	var w strings.Builder
	name := strings.TrimPrefix(path, "/")
	fmt.Fprintf(&w, "--- a/%s\n+++ b/%s\n", name, name)
	fmt.Fprintf(&w, "@@ -%s +%s @@\n", hunkRange(start, endA-start), hunkRange(start, endB-start))
	for _, l := range a[start:pre] {
		writeLine(&w, ' ', l)
	}
	for _, l := range a[pre : len(a)-suf] {
		writeLine(&w, '-', l)
	}
	for _, l := range b[pre : len(b)-suf] {
		writeLine(&w, '+', l)
	}
	for _, l := range a[len(a)-suf : endA] {
		writeLine(&w, ' ', l)
	}
	return w.String()
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

func writeLine(w *strings.Builder, mark byte, l string) {
	w.WriteByte(mark)
	if t, ok := strings.CutSuffix(l, "\n"); ok {
		w.WriteString(t)
		w.WriteByte('\n')
		return
	}
	w.WriteString(l)
	w.WriteString("\n\\ No newline at end of file\n")
}

// splitLines splits s after each newline, keeping them.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func withNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}
