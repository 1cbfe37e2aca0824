package claudecode

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The shape Claude Code reads hooks in (https://code.claude.com/docs/en/hooks,
// "Configuration"):
//
//	{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "..."}]}]}}
//
// A matcher of "*", "" or none matches every tool.

// HookCommand is the command settings.json runs for the hook: airlock's
// path (quoted only if it needs to be) and "hook claude-code", with
// --sandbox when sandbox is true.
func HookCommand(airlock string, sandbox bool) string {
	cmd := shellWord(airlock) + " hook claude-code"
	if sandbox {
		cmd += " --sandbox"
	}
	return cmd
}

// isAirlockHook reports whether a hook command runs "airlock hook
// claude-code" (with any path to airlock and any flags).
func isAirlockHook(cmd string) bool {
	i := strings.Index(cmd, " hook claude-code")
	if i < 0 {
		return false
	}
	if rest := cmd[i+len(" hook claude-code"):]; rest != "" && !strings.HasPrefix(rest, " ") {
		return false
	}
	head := strings.Trim(cmd[:i], `'"`)
	return filepath.Base(head) == "airlock"
}

func matchesAll(group *node) bool {
	m := group.get("matcher")
	if m == nil {
		return true
	}
	s, ok := m.str()
	return ok && (s == "" || s == "*")
}

// RegisterHook returns the settings document data with the airlock
// PreToolUse hook running command for every tool, and whether that
// changed anything. Every other key, hook and matcher group is kept, in
// its order. An airlock hook already there is updated in place (when its
// group matches every tool) and any other airlock hook entry is removed,
// so running it twice, or with other flags, leaves exactly one. Data that
// is not a JSON object, has duplicate keys, or has "hooks" of the wrong
// shape is an error: the file is never rewritten from a guess.
func RegisterHook(data []byte, command string) ([]byte, bool, error) {
	root := &node{kind: '{'}
	if len(bytes.TrimSpace(data)) > 0 {
		var err error
		if root, err = parseTree(data); err != nil {
			return nil, false, fmt.Errorf("not valid JSON (%v); fix or move the file and run again", err)
		}
		if root.kind != '{' {
			return nil, false, errors.New("not a JSON object; fix or move the file and run again")
		}
	}
	hooks := root.get("hooks")
	if hooks == nil {
		hooks = &node{kind: '{'}
		root.set("hooks", hooks)
	} else if hooks.kind != '{' {
		return nil, false, errors.New(`"hooks" is not an object; fix it and run again`)
	}
	pre := hooks.get("PreToolUse")
	if pre == nil {
		pre = &node{kind: '['}
		hooks.set("PreToolUse", pre)
	} else if pre.kind != '[' {
		return nil, false, errors.New(`"hooks.PreToolUse" is not an array; fix it and run again`)
	}

	type place struct{ group, entry int }
	var found []place
	for gi, g := range pre.items {
		if g.kind != '{' {
			return nil, false, fmt.Errorf(`"hooks.PreToolUse[%d]" is not an object; fix it and run again`, gi)
		}
		list := g.get("hooks")
		if list == nil {
			continue
		}
		if list.kind != '[' {
			return nil, false, fmt.Errorf(`"hooks.PreToolUse[%d].hooks" is not an array; fix it and run again`, gi)
		}
		for ei, e := range list.items {
			if e.kind != '{' {
				continue
			}
			if c, ok := e.get("command").str(); ok && isAirlockHook(c) {
				found = append(found, place{gi, ei})
			}
		}
	}
	if len(found) == 1 {
		f := found[0]
		e := pre.items[f.group].get("hooks").items[f.entry]
		c, _ := e.get("command").str()
		typ, _ := e.get("type").str()
		if c == command && typ == "command" && matchesAll(pre.items[f.group]) {
			return data, false, nil
		}
	}

	entry := &node{kind: '{', members: []member{{"type", stringNode("command")}, {"command", stringNode(command)}}}
	keepAt := -1 // the first airlock entry, if its group matches every tool
	if len(found) > 0 && matchesAll(pre.items[found[0].group]) {
		keepAt = 0
		f := found[0]
		e := pre.items[f.group].get("hooks").items[f.entry]
		e.set("type", stringNode("command"))
		e.set("command", stringNode(command))
	}
	// Remove the other airlock entries, last first so indexes hold, and
	// groups they leave empty.
	for i := len(found) - 1; i >= 0; i-- {
		if i == keepAt {
			continue
		}
		f := found[i]
		list := pre.items[f.group].get("hooks")
		list.items = append(list.items[:f.entry], list.items[f.entry+1:]...)
		if len(list.items) == 0 {
			pre.items = append(pre.items[:f.group], pre.items[f.group+1:]...)
		}
	}
	if keepAt < 0 {
		pre.items = append(pre.items, &node{kind: '{', members: []member{
			{"matcher", stringNode("*")},
			{"hooks", &node{kind: '[', items: []*node{entry}}},
		}})
	}
	var b strings.Builder
	root.encode(&b, "")
	b.WriteByte('\n')
	return []byte(b.String()), true, nil
}

// InstallResult says what InstallHook did.
type InstallResult struct {
	// Path is the settings file written (a symlink's target).
	Path string
	// Changed is false when the hook was already registered as asked.
	Changed bool
	// Backup is where the previous content was saved, "" when there was
	// no previous file or nothing changed.
	Backup string
}

// InstallHook registers command in the settings file at path (see
// RegisterHook). A missing file is created with mode newMode (and its
// directory with 0755 or 0700 to match). An existing one is first copied
// to PATH.airlock-backup (or .airlock-backup.N if that exists), then
// replaced atomically: a temporary file in the same directory, written,
// synced, and renamed over it. If the file changes while this runs (Claude
// Code writes it too), nothing is replaced and the error says to run again.
func InstallHook(path, command string, newMode fs.FileMode) (InstallResult, error) {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target // keep a symlinked settings file a symlink
	}
	res := InstallResult{Path: path}
	data, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, err
	}
	mode := newMode
	if exists {
		fi, err := os.Stat(path)
		if err != nil {
			return res, err
		}
		if !fi.Mode().IsRegular() {
			return res, fmt.Errorf("%s is not a regular file", path)
		}
		mode = fi.Mode().Perm()
	}
	out, changed, err := RegisterHook(data, command)
	if err != nil {
		return res, fmt.Errorf("%s: %w (the file was not changed)", path, err)
	}
	if !changed {
		return res, nil
	}
	dir := filepath.Dir(path)
	dirMode := fs.FileMode(0o755)
	if newMode&0o044 == 0 {
		dirMode = 0o700
	}
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return res, err
	}
	if exists {
		if res.Backup, err = writeBackup(path, data, mode); err != nil {
			return res, fmt.Errorf("writing a backup of %s: %w (the file was not changed)", path, err)
		}
	}
	tmp, err := os.CreateTemp(dir, ".settings-*.json")
	if err != nil {
		return res, err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(out)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return res, fmt.Errorf("writing %s: %w (the file was not changed)", path, err)
	}
	now, err := os.ReadFile(path)
	if exists != (err == nil) || !bytes.Equal(now, data) {
		return res, fmt.Errorf("%s changed while the hook was being added (the file was not changed); run again", path)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return res, err
	}
	syncDir(dir)
	res.Changed = true
	return res, nil
}

// writeBackup saves data next to path under a name no file has yet.
func writeBackup(path string, data []byte, mode fs.FileMode) (string, error) {
	for i := 0; i < 1000; i++ {
		name := path + ".airlock-backup"
		if i > 0 {
			name += "." + strconv.Itoa(i)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.Write(data)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(name)
			return "", err
		}
		return name, nil
	}
	return "", errors.New("too many backups; remove some")
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
