package tool

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// preparePathField prepares a tool whose input names one file in field
// (Read's file_path, NotebookEdit's notebook_path, ...).
func preparePathField(kind, field string) PrepareFunc {
	return func(call Call) ([]Requirement, error) {
		var in map[string]json.RawMessage
		if err := decodeInput(call, &in); err != nil {
			return nil, err
		}
		var p string
		if raw, ok := in[field]; !ok || json.Unmarshal(raw, &p) != nil || p == "" {
			return nil, fmt.Errorf("%w: %s needs a %q string", ErrInvalidInput, call.Tool, field)
		}
		r, err := toolPath(kind, p, callDir(call), callHome(call))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalidInput, call.Tool, err)
		}
		if call.Tool == "LS" {
			r.Tree = true // a listing shows the names inside
		}
		return []Requirement{r}, nil
	}
}

// toolPath is the requirement for a path a file tool (Read, Write, Edit,
// Grep's path) was given: made absolute against dir ("~/" against home),
// resolved like the kernel resolves it (Canonical), with the names it was
// written as. A control character refuses the path. A glob or brace
// character makes its component unknown, and a leading "$VAR" or "~user"
// everything before the first "/": the tool does not expand them, but
// whoever approves would read them as a pattern or a variable, and a deny
// rule that could match must hold.
func toolPath(kind, p, dir, home string) (Requirement, error) {
	if BadPathRune(p) {
		return Requirement{}, fmt.Errorf("path %q holds a control or invisible character; a file name with one is refused", p)
	}
	if strings.HasPrefix(p, "$") || strings.HasPrefix(p, "~") && p != "~" && !strings.HasPrefix(p, "~/") {
		// "$HOME/.ssh/id_rsa", "~root/.ssh": where it starts is unknown.
		rest := ""
		if i := strings.IndexByte(p, '/'); i >= 0 {
			rest = filepath.Clean(p[i:])
		}
		return Requirement{Kind: kind, Target: p, Shape: string(Hole) + rest, Unresolved: true}, nil
	}
	abs := absPath(p, dir, home)
	if shape := pathShape(abs); shape != "" {
		return Requirement{Kind: kind, Target: filepath.Clean(abs), Shape: filepath.Clean(shape), Unresolved: true}, nil
	}
	target, names := ResolveNames(abs)
	return Requirement{Kind: kind, Target: target, Names: names}, nil
}

// absPath makes p absolute against dir, "~" and "~/x" against home.
func absPath(p, dir, home string) string {
	switch {
	case p == "~":
		return home
	case strings.HasPrefix(p, "~/"):
		return home + "/" + p[2:]
	case !filepath.IsAbs(p):
		return dir + "/" + p
	}
	return p
}

// prepareSearch prepares Glob and Grep: a read of the tree they search,
// which is the "path" field (default: the working directory) joined with
// the pattern's leading literal directories for Glob. Everything beneath
// it can show up in the result, so a rule about anything inside is about
// the search (Requirement.Tree). Grep's glob and type filters do not
// narrow it: a deny rule's pattern and a filter can both match one file.
func prepareSearch(call Call) ([]Requirement, error) {
	var in struct {
		Pattern *string `json:"pattern"`
		Path    *string `json:"path"`
		Glob    *string `json:"glob"`
		Type    *string `json:"type"`
	}
	if err := decodeInput(call, &in); err != nil {
		return nil, err
	}
	if in.Pattern == nil || *in.Pattern == "" {
		return nil, fmt.Errorf("%w: %s needs a \"pattern\" string", ErrInvalidInput, call.Tool)
	}
	dir := callDir(call)
	if in.Path != nil && *in.Path != "" {
		if BadPathRune(*in.Path) {
			return nil, fmt.Errorf("%w: %s: path %q holds a control or invisible character", ErrInvalidInput, call.Tool, *in.Path)
		}
		dir = absPath(*in.Path, dir, callHome(call))
	}
	if call.Tool == "Glob" {
		if BadPathRune(*in.Pattern) {
			return nil, fmt.Errorf("%w: %s: pattern %q holds a control or invisible character", ErrInvalidInput, call.Tool, *in.Pattern)
		}
		if static := globStaticPrefix(*in.Pattern); static != "" {
			dir = absPath(static, dir, callHome(call))
		}
	}
	r, err := toolPath(KindFilesystemRead, dir, "/", callHome(call))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidInput, call.Tool, err)
	}
	r.Tree = true
	return []Requirement{r}, nil
}

// globStaticPrefix returns the leading directories of a glob pattern that
// contain no glob characters: "src/**/*.go" → "src", "/etc/*" → "/etc".
func globStaticPrefix(pattern string) string {
	parts := strings.Split(pattern, "/")
	n := 0
	for n < len(parts)-1 && !strings.ContainsAny(parts[n], globRunes) {
		n++
	}
	prefix := strings.Join(parts[:n], "/")
	if prefix == "" && strings.HasPrefix(pattern, "/") {
		return "/"
	}
	return prefix
}

// prepareWebFetch prepares a fetch of one http or https URL as a
// network.connect to its host:port.
func prepareWebFetch(call Call) ([]Requirement, error) {
	var in struct {
		URL *string `json:"url"`
	}
	if err := decodeInput(call, &in); err != nil {
		return nil, err
	}
	if in.URL == nil {
		return nil, fmt.Errorf("%w: %s needs a \"url\" string", ErrInvalidInput, call.Tool)
	}
	target, err := URLTarget(*in.URL)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidInput, call.Tool, err)
	}
	return []Requirement{{Kind: KindNetworkConnect, Target: target}}, nil
}

// prepareNamedTool prepares a tool that is decided by its name alone:
// MCP tools, WebSearch, Task.
func prepareNamedTool(call Call) ([]Requirement, error) {
	// The input is not decided on, but one the tool's parser and the
	// gate's could read two ways is still refused.
	if len(call.Input) > 0 && string(call.Input) != "null" {
		if err := checkInput(call.Tool, call.Input); err != nil {
			return nil, fmt.Errorf("%w: %s input: %v", ErrInvalidInput, call.Tool, err)
		}
	}
	return []Requirement{{Kind: KindToolInvoke, Target: call.Tool}}, nil
}

// prepareMCPTool prepares an MCP tool: decided by its name, and by its
// arguments where a rule has an argument pattern.
func prepareMCPTool(call Call) ([]Requirement, error) {
	// Argument patterns read the input, so it must read one way only.
	if len(call.Input) > 0 && string(call.Input) != "null" {
		if err := checkInput(call.Tool, call.Input); err != nil {
			return nil, fmt.Errorf("%w: %s input: %v", ErrInvalidInput, call.Tool, err)
		}
	}
	return []Requirement{{Kind: KindToolInvoke, Target: call.Tool, Args: string(call.Input)}}, nil
}

// callDir is the absolute directory a call runs in.
func callDir(call Call) string {
	ws := call.Workspace
	if ws == "" {
		ws = "/"
	}
	ws = filepath.Clean(ws)
	if call.Cwd == "" {
		return ws
	}
	if filepath.IsAbs(call.Cwd) {
		return filepath.Clean(call.Cwd)
	}
	return filepath.Join(ws, call.Cwd)
}

// callHome is the directory "~" stands for in a call.
func callHome(call Call) string {
	if call.Home != "" {
		return filepath.Clean(call.Home)
	}
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	return "/nonexistent-home"
}
