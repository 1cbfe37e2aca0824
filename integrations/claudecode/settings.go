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
// "Configuration"; the hooks member of Settings in the Agent SDK's
// sdk.d.ts):
//
//	{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
//	  {"type": "command", "command": "/usr/local/bin/airlock",
//	   "args": ["hook", "claude-code"], "onFailure": "block"}]}]}}
//
// A matcher of "*", "" or none matches every tool. With "args" (the exec
// form) Claude Code runs command itself with those arguments, through no
// shell, so no quoting of airlock's path can go wrong. "onFailure":
// "block" makes a hook that cannot start, times out, crashes or prints
// something Claude Code cannot read block the call instead of letting it
// through (the default, "continue").

// HookEntry is the hook command settings.json runs: an executable and its
// arguments.
type HookEntry struct {
	Command string
	Args    []string
}

// AirlockHook is the entry that runs "AIRLOCK hook claude-code", with
// --sandbox when sandbox is true; airlock is an absolute path.
func AirlockHook(airlock string, sandbox bool) HookEntry {
	e := HookEntry{Command: airlock, Args: []string{"hook", "claude-code"}}
	if sandbox {
		e.Args = append(e.Args, "--sandbox")
	}
	return e
}

// String is the entry as one shell command line (for messages, and for
// a Claude Code that has no exec form).
func (e HookEntry) String() string {
	words := []string{shellWord(e.Command)}
	for _, a := range e.Args {
		words = append(words, shellWord(a))
	}
	return strings.Join(words, " ")
}

// HookCommand is AirlockHook(airlock, sandbox).String(): the shell form.
func HookCommand(airlock string, sandbox bool) string {
	return AirlockHook(airlock, sandbox).String()
}

// isAirlockHook reports whether a hook entry runs "airlock hook
// claude-code" (with any path to airlock and any flags), in the exec form
// or as a shell command line.
func isAirlockHook(e *node) bool {
	cmd, ok := e.get("command").str()
	if !ok {
		return false
	}
	if args := e.get("args"); args != nil && args.kind == '[' {
		if filepath.Base(cmd) != "airlock" || len(args.items) < 2 {
			return false
		}
		a0, _ := args.items[0].str()
		a1, _ := args.items[1].str()
		return a0 == "hook" && a1 == "claude-code"
	}
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

// sameEntry reports whether e is already exactly the entry wanted.
func sameEntry(e *node, want HookEntry) bool {
	typ, _ := e.get("type").str()
	cmd, _ := e.get("command").str()
	fail, _ := e.get("onFailure").str()
	args := e.get("args")
	if typ != "command" || cmd != want.Command || fail != "block" || args == nil || args.kind != '[' || len(args.items) != len(want.Args) {
		return false
	}
	for i, a := range args.items {
		if s, ok := a.str(); !ok || s != want.Args[i] {
			return false
		}
	}
	return true
}

// fill sets the members of the airlock entry, keeping any others (a
// timeout, a statusMessage) that a person added.
func fill(e *node, want HookEntry) {
	e.set("type", stringNode("command"))
	e.set("command", stringNode(want.Command))
	args := &node{kind: '['}
	for _, a := range want.Args {
		args.items = append(args.items, stringNode(a))
	}
	e.set("args", args)
	e.set("onFailure", stringNode("block"))
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
// PreToolUse hook running hook for every tool, failing closed, and whether that
// changed anything. Every other key, hook and matcher group is kept, in
// its order. An airlock hook already there is updated in place (when its
// group matches every tool) and any other airlock hook entry is removed,
// so running it twice, or with other flags, leaves exactly one. Data that
// is not a JSON object, has duplicate keys, or has "hooks" of the wrong
// shape is an error: the file is never rewritten from a guess.
func RegisterHook(data []byte, hook HookEntry) ([]byte, bool, error) {
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
			if isAirlockHook(e) {
				found = append(found, place{gi, ei})
			}
		}
	}
	if len(found) == 1 {
		f := found[0]
		e := pre.items[f.group].get("hooks").items[f.entry]
		if sameEntry(e, hook) && matchesAll(pre.items[f.group]) {
			return data, false, nil
		}
	}

	entry := &node{kind: '{'}
	fill(entry, hook)
	keepAt := -1 // the first airlock entry, if its group matches every tool
	if len(found) > 0 && matchesAll(pre.items[found[0].group]) {
		keepAt = 0
		f := found[0]
		fill(pre.items[f.group].get("hooks").items[f.entry], hook)
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

// InstallHook registers hook in the settings file at path (see
// RegisterHook). A missing file is created with mode newMode (and its
// directory with 0755 or 0700 to match). An existing one is first copied
// to PATH.airlock-backup (or .airlock-backup.N if that exists), then
// replaced atomically: a temporary file in the same directory, written,
// synced, and renamed over it. If the file changes while this runs (Claude
// Code writes it too), nothing is replaced and the error says to run again.
func InstallHook(path string, hook HookEntry, newMode fs.FileMode) (InstallResult, error) {
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
	out, changed, err := RegisterHook(data, hook)
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
