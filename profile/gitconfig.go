package profile

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// The hooks directory a repository's config names (core.hooksPath, as
// husky and others set it) is an agent-persistence path like .git/hooks:
// git runs what is there. The sandbox protects it for a run and the gate
// gates writes to it (IsProtected); both read it here.

// EachGitConfigEntry calls f with the section (without its subsection),
// the key, both lower-cased, and the value (unquoted, trimmed) of every
// entry of a git config file; false if the file is not one it can read.
func EachGitConfigEntry(data []byte, f func(section, key, value string)) bool {
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return false
			}
			// [remote "origin"] → remote; the subsection name is irrelevant.
			name := strings.Fields(line[1:end])
			if len(name) == 0 {
				return false
			}
			section = strings.ToLower(name[0])
			if rest := strings.TrimSpace(line[end+1:]); rest != "" {
				line = rest
			} else {
				continue
			}
		}
		key, value, _ := strings.Cut(line, "=")
		value = strings.TrimSpace(value)
		if i := strings.IndexAny(value, "#;"); i >= 0 && !strings.HasPrefix(value, `"`) {
			value = strings.TrimSpace(value[:i])
		}
		f(section, strings.ToLower(strings.TrimSpace(key)), strings.Trim(value, `"`))
	}
	return sc.Err() == nil
}

// GitHooksPath returns the hooks directory the git config of the
// repository at ws names (core.hooksPath), relative to ws, or "" when it
// names none, names one outside ws (or ws itself), or holds a glob or
// "~". The config is the one git reads: .git/config, or for a .git file
// ("gitdir: DIR", a worktree or submodule) DIR's commondir config, then
// DIR/config and DIR/config.worktree, the last value winning.
func GitHooksPath(ws string) string {
	var hooks string
	for _, cfg := range gitConfigFiles(ws) {
		data, err := os.ReadFile(cfg)
		if err != nil {
			continue
		}
		EachGitConfigEntry(data, func(section, key, value string) {
			if section == "core" && key == "hookspath" {
				hooks = value
			}
		})
	}
	if hooks == "" || strings.HasPrefix(hooks, "~") {
		return ""
	}
	if !filepath.IsAbs(hooks) {
		hooks = filepath.Join(ws, hooks)
	}
	rel, err := filepath.Rel(ws, filepath.Clean(hooks))
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || strings.ContainsAny(rel, "*?[") {
		// The workspace itself, or outside it (where neither a run nor
		// the workspace profile writes).
		return ""
	}
	return rel
}

// gitConfigFiles lists the config files of the repository at ws, in the
// order git reads them.
func gitConfigFiles(ws string) []string {
	dotgit := filepath.Join(ws, ".git")
	fi, err := os.Lstat(dotgit)
	if err != nil {
		return nil
	}
	if fi.IsDir() {
		return []string{filepath.Join(dotgit, "config"), filepath.Join(dotgit, "config.worktree")}
	}
	data, err := os.ReadFile(dotgit)
	if err != nil {
		return nil
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return nil
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(ws, dir)
	}
	var files []string
	if common, err := os.ReadFile(filepath.Join(dir, "commondir")); err == nil {
		c := strings.TrimSpace(string(common))
		if !filepath.IsAbs(c) {
			c = filepath.Join(dir, c)
		}
		files = append(files, filepath.Join(c, "config"))
	}
	return append(files, filepath.Join(dir, "config"), filepath.Join(dir, "config.worktree"))
}
