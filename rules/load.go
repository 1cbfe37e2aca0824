package rules

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// DefaultManagedPath is the managed layer's rule file.
const DefaultManagedPath = "/etc/airlock/policy.toml"

// Sources says where the rule files of each layer are. Zero values take
// the documented default locations.
type Sources struct {
	// Workspace is the project directory; its .airlock/policy.toml,
	// .airlock/policy.local.toml and (with Claude) .claude/settings*.json
	// are read. Empty means no workspace layers.
	Workspace string
	// Home is the user's home directory; empty means $HOME.
	Home string
	// Managed is the managed layer's file; empty means
	// DefaultManagedPath, "-" means none.
	Managed string
	// User is the user layer's file; empty means
	// ~/.config/airlock/policy.toml, "-" means none.
	User string
	// NoClaude skips Claude Code's .claude/settings.json and
	// .claude/settings.local.json permission lists.
	NoClaude bool
}

// File is one rule file of a layer.
type File struct {
	Layer Layer
	Path  string
	// Claude marks a Claude Code settings file (JSON permission lists).
	Claude bool
	// Root is what "/path" in the file's rules is relative to.
	Root string
}

// LocalPath is the workspace's local rule file, where "always" answers go.
func LocalPath(workspace string) string {
	return filepath.Join(workspace, ".airlock", "policy.local.toml")
}

// Files lists the rule files of src, strongest layer first. Files that do
// not exist are listed too; Load skips them.
func (src Sources) Files() []File {
	home := src.home()
	var out []File
	if src.Managed != "-" {
		p := src.Managed
		if p == "" {
			p = DefaultManagedPath
		}
		out = append(out, File{Layer: Managed, Path: p, Root: "/"})
	}
	if src.User != "-" {
		p := src.User
		if p == "" {
			p = filepath.Join(home, ".config", "airlock", "policy.toml")
		}
		out = append(out, File{Layer: User, Path: p, Root: home})
	}
	if ws := src.Workspace; ws != "" {
		out = append(out, File{Layer: Workspace, Path: filepath.Join(ws, ".airlock", "policy.toml"), Root: ws})
		if !src.NoClaude {
			out = append(out, File{Layer: Workspace, Path: filepath.Join(ws, ".claude", "settings.json"), Root: ws, Claude: true})
		}
		out = append(out, File{Layer: Local, Path: LocalPath(ws), Root: ws})
		if !src.NoClaude {
			out = append(out, File{Layer: Local, Path: filepath.Join(ws, ".claude", "settings.local.json"), Root: ws, Claude: true})
		}
	}
	return out
}

func (src Sources) home() string {
	if src.Home != "" {
		return src.Home
	}
	h, _ := os.UserHomeDir()
	return h
}

// Load reads every rule file of src into a Set. A missing file is no
// rules; a file that cannot be read or parsed is an error naming the file,
// the line and the rule, and no Set is returned: a broken policy must not
// silently become a weaker one.
func Load(src Sources) (*Set, error) {
	set, _, err := LoadFiles(src)
	return set, err
}

// FileData is a rule file that exists and the bytes of it that were
// parsed.
type FileData struct {
	File
	Data []byte
}

// LoadFiles is Load, also returning the files that exist, strongest layer
// first, with what was read of them: a caller that wants more from the
// same files (the workspace's "sandbox = true") reads the bytes the rules
// came from instead of opening every file again.
func LoadFiles(src Sources) (*Set, []FileData, error) {
	base := Base{Cwd: src.Workspace, Home: src.home()}
	var all []*Rule
	var found []FileData
	var errs []error
	for _, f := range src.Files() {
		data, err := os.ReadFile(f.Path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("rules: %s layer: %w", f.Layer, err))
			continue
		}
		found = append(found, FileData{File: f, Data: data})
		b := base
		b.Root = f.Root
		var rs []*Rule
		if f.Claude {
			rs, err = ParseClaudeSettings(data, f.Path, f.Layer, b)
		} else {
			rs, err = ParseFile(data, f.Path, f.Layer, b)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		all = append(all, rs...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	return NewSet(all), found, nil
}

// FileError is an error in a rule file: the file, the line (0 when the
// whole file is at fault) and the rule text involved.
type FileError struct {
	Path string
	Line int
	Rule string
	Err  error
}

func (e *FileError) Error() string {
	loc := e.Path
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.Path, e.Line)
	}
	if e.Rule != "" {
		return fmt.Sprintf("%s: rule %q: %v", loc, e.Rule, e.Err)
	}
	return fmt.Sprintf("%s: %v", loc, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

type fileRules struct {
	Rule []struct {
		Effect  string `toml:"effect"`
		Match   string `toml:"match"`
		Reason  string `toml:"reason"`
		Expires any    `toml:"expires"`
		Example []struct {
			Tool   string `toml:"tool"`
			Input  any    `toml:"input"`
			Expect string `toml:"expect"`
		} `toml:"example"`
	} `toml:"rule"`

	// Sandbox is not a rule: "sandbox = true" asks the Claude Code hook
	// to run Bash calls inside airlock run (integrations/claudecode reads
	// it). It is accepted here so that the file stays valid.
	Sandbox bool `toml:"sandbox"`
}

// ParseFile parses a TOML rule file (see the package doc) read from path.
func ParseFile(data []byte, path string, layer Layer, base Base) ([]*Rule, error) {
	var f fileRules
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		line := 0
		var pe toml.ParseError
		if errors.As(err, &pe) {
			line = pe.Position.Line
			err = errors.New(pe.Message)
		}
		return nil, &FileError{Path: path, Line: line, Err: err}
	}
	ruleLines, exampleLines := headerLines(string(data))
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return nil, &FileError{Path: path, Err: fmt.Errorf("unknown keys %s: a rule file has sandbox and [[rule]]; a rule has effect, match, reason, expires and [[rule.example]] tool, input, expect", strings.Join(keys, ", "))}
	}
	var out []*Rule
	for i, fr := range f.Rule {
		line := at(ruleLines, i)
		fail := func(err error) error { return &FileError{Path: path, Line: line, Rule: fr.Match, Err: err} }
		if fr.Match == "" {
			return nil, fail(errors.New("missing match"))
		}
		effect, err := ParseEffect(fr.Effect)
		if err != nil {
			return nil, fail(err)
		}
		r, err := NewRule(effect, fr.Match, layer, base)
		if err != nil {
			return nil, fail(err)
		}
		r.Reason, r.Source, r.Line = fr.Reason, path, line
		switch v := fr.Expires.(type) {
		case nil:
		case time.Time:
			r.Expires = v
		case string:
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return nil, fail(fmt.Errorf("expires %q: use an RFC 3339 date-time such as 2027-01-01T00:00:00Z", v))
			}
			r.Expires = t
		default:
			return nil, fail(fmt.Errorf("expires must be a date-time, not %T", v))
		}
		for j, ex := range fr.Example {
			exLine := at(exampleLines[i], j)
			expect, err := ParseEffect(ex.Expect)
			if err != nil {
				return nil, &FileError{Path: path, Line: exLine, Rule: fr.Match, Err: fmt.Errorf("example: %w", err)}
			}
			e := Example{Tool: ex.Tool, Expect: expect, Line: exLine}
			if e.Tool == "" {
				e.Tool = r.Pattern.Tool
			}
			if e.Input, err = exampleInput(e.Tool, ex.Input); err != nil {
				return nil, &FileError{Path: path, Line: exLine, Rule: fr.Match, Err: fmt.Errorf("example: %w", err)}
			}
			r.Examples = append(r.Examples, e)
		}
		out = append(out, r)
	}
	return out, nil
}

// exampleInput turns an example's input into the tool's JSON input: a
// table is encoded as JSON, a string starting with "{" is JSON already, and
// any other string is the tool's main field (Bash's command, Read's
// file_path, WebFetch's url).
func exampleInput(toolName string, in any) (string, error) {
	switch v := in.(type) {
	case nil:
		return "", errors.New("missing input")
	case map[string]any:
		b, err := json.Marshal(v)
		return string(b), err
	case string:
		if strings.HasPrefix(strings.TrimSpace(v), "{") {
			if !json.Valid([]byte(v)) {
				return "", fmt.Errorf("input %q is not valid JSON", v)
			}
			return v, nil
		}
		field := map[string]string{
			"Bash": "command", "Read": "file_path", "Write": "file_path", "Edit": "file_path",
			"MultiEdit": "file_path", "NotebookEdit": "notebook_path", "WebFetch": "url",
			"Glob": "pattern", "Grep": "pattern", "WebSearch": "query",
		}[toolName]
		if field == "" {
			field = "input"
		}
		b, err := json.Marshal(map[string]string{field: v})
		return string(b), err
	}
	return "", fmt.Errorf("input must be a string or a table, not %T", in)
}

// headerLines finds the line of every [[rule]] and, per rule, of every
// [[rule.example]] header, so that errors can name a line.
func headerLines(text string) (rules []int, examples map[int][]int) {
	examples = map[int][]int{}
	for i, line := range strings.Split(text, "\n") {
		switch strings.ReplaceAll(strings.TrimSpace(strings.SplitN(line, "#", 2)[0]), " ", "") {
		case "[[rule]]":
			rules = append(rules, i+1)
		case "[[rule.example]]":
			if n := len(rules); n > 0 {
				examples[n-1] = append(examples[n-1], i+1)
			}
		}
	}
	return rules, examples
}

func at(list []int, i int) int {
	if i < len(list) {
		return list[i]
	}
	return 0
}

// ParseClaudeSettings reads the permissions.allow, .ask and .deny lists of
// a Claude Code settings file.
func ParseClaudeSettings(data []byte, path string, layer Layer, base Base) ([]*Rule, error) {
	var s struct {
		Permissions struct {
			Allow []string `json:"allow"`
			Ask   []string `json:"ask"`
			Deny  []string `json:"deny"`
		} `json:"permissions"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, &FileError{Path: path, Line: jsonErrorLine(data, err), Err: err}
	}
	lines := strings.Split(string(data), "\n")
	var out []*Rule
	for _, list := range []struct {
		effect Effect
		texts  []string
	}{{Deny, s.Permissions.Deny}, {Ask, s.Permissions.Ask}, {Allow, s.Permissions.Allow}} {
		for _, text := range list.texts {
			line := lineOf(lines, text)
			r, err := NewRule(list.effect, text, layer, base)
			if err != nil {
				return nil, &FileError{Path: path, Line: line, Rule: text, Err: err}
			}
			r.Source, r.Line = path, line
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out, nil
}

// lineOf finds the first line that holds text as a JSON string.
func lineOf(lines []string, text string) int {
	quoted, _ := json.Marshal(text)
	for i, l := range lines {
		if strings.Contains(l, string(quoted)) {
			return i + 1
		}
	}
	return 0
}

func jsonErrorLine(data []byte, err error) int {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return 0
	}
	return strings.Count(string(data[:min(int(se.Offset), len(data))]), "\n") + 1
}
