package tool

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// preparePathField prepares a tool whose input names one file in field
// (Read's file_path, NotebookEdit's notebook_path, ...).
func preparePathField(kind, field string) PrepareFunc {
	return func(call Call) ([]Requirement, error) {
		var in map[string]any
		if err := decodeInput(call, &in); err != nil {
			return nil, err
		}
		p, _ := in[field].(string)
		if p == "" {
			return nil, fmt.Errorf("%w: %s needs a %q string", ErrInvalidInput, call.Tool, field)
		}
		return []Requirement{{Kind: kind, Target: resolvePath(p, callDir(call), callHome(call))}}, nil
	}
}

// prepareSearch prepares Glob and Grep: a read of the tree they search,
// which is the "path" field (default: the working directory) joined with
// the pattern's leading literal directories for Glob.
func prepareSearch(call Call) ([]Requirement, error) {
	var in struct {
		Pattern string `json:"pattern"`
		Path    string `json:"path"`
	}
	if err := decodeInput(call, &in); err != nil {
		return nil, err
	}
	if in.Pattern == "" {
		return nil, fmt.Errorf("%w: %s needs a \"pattern\" string", ErrInvalidInput, call.Tool)
	}
	dir := callDir(call)
	if in.Path != "" {
		dir = resolvePath(in.Path, dir, callHome(call))
	}
	if call.Tool == "Glob" {
		if static := globStaticPrefix(in.Pattern); static != "" {
			dir = resolvePath(static, dir, callHome(call))
		}
	}
	return []Requirement{{Kind: KindFilesystemRead, Target: dir}}, nil
}

// globStaticPrefix returns the leading directories of a glob pattern that
// contain no glob characters: "src/**/*.go" → "src", "/etc/*" → "/etc".
func globStaticPrefix(pattern string) string {
	parts := strings.Split(pattern, "/")
	n := 0
	for n < len(parts)-1 && !strings.ContainsAny(parts[n], "*?[{") {
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
		URL string `json:"url"`
	}
	if err := decodeInput(call, &in); err != nil {
		return nil, err
	}
	target, err := URLTarget(in.URL)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidInput, call.Tool, err)
	}
	return []Requirement{{Kind: KindNetworkConnect, Target: target}}, nil
}

// URLTarget returns the host:port an http or https URL connects to, with
// the host in lower case and the scheme's default port filled in.
func URLTarget(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("url %q: %v", raw, err)
	}
	port := u.Port()
	switch strings.ToLower(u.Scheme) {
	case "https":
		if port == "" {
			port = "443"
		}
	case "http":
		if port == "" {
			port = "80"
		}
	default:
		return "", fmt.Errorf("url %q: only http and https URLs can be fetched", raw)
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return "", fmt.Errorf("url %q has no host", raw)
	}
	return net.JoinHostPort(host, port), nil
}

// prepareNamedTool prepares a tool that is decided by its name alone:
// MCP tools, WebSearch, Task. Its input is not inspected.
func prepareNamedTool(call Call) ([]Requirement, error) {
	return []Requirement{{Kind: KindToolInvoke, Target: call.Tool}}, nil
}

// prepareMCPTool prepares an MCP tool: decided by its name, and by its
// arguments where a rule has an argument pattern.
func prepareMCPTool(call Call) ([]Requirement, error) {
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

// resolvePath makes p absolute against dir ("~" and "~/x" against home),
// cleans it and resolves the symlinks of the part that exists.
func resolvePath(p, dir, home string) string {
	switch {
	case p == "~":
		p = home
	case strings.HasPrefix(p, "~/"):
		p = filepath.Join(home, p[2:])
	case !filepath.IsAbs(p):
		p = filepath.Join(dir, p)
	}
	return Canonical(p)
}

// Canonical cleans the absolute path p and resolves symlinks in its longest
// existing prefix, so that a link inside the workspace that points at a
// secret is judged by where it points. Parts that do not exist yet are kept
// as written.
func Canonical(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	dir, rest := p, ""
	for dir != "/" && dir != "." {
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = filepath.Dir(dir)
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
	}
	return p
}
