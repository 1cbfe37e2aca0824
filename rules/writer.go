package rules

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/airlockhq/airlock/tool"
)

// ErrNotExact is returned when a requirement has no exact rule: its target
// has an expansion, an unresolved path or could not be parsed, so a rule
// saved for it would either never match or match more than was shown.
var ErrNotExact = errors.New("rules: no exact rule for this requirement")

// ExactMatch returns the narrowest rule text that matches r: the exact
// command, path, host:port or tool name, with every wildcard character
// escaped. It never returns a rule broader than r ("Bash(*)" cannot come
// out of it).
func ExactMatch(r tool.Requirement) (string, error) {
	if !r.Exact() || r.Target == "" {
		return "", fmt.Errorf("%w: %v", ErrNotExact, r)
	}
	switch r.Kind {
	case tool.KindCommandExecute:
		return "Bash(" + escapeGlob(r.Target) + ")", nil
	case tool.KindFilesystemRead:
		return "Read(/" + escapeGlob(r.Target) + ")", nil
	case tool.KindFilesystemWrite:
		return "Edit(/" + escapeGlob(r.Target) + ")", nil
	case tool.KindNetworkConnect:
		if strings.ContainsAny(r.Target, "*()") {
			return "", fmt.Errorf("%w: %v", ErrNotExact, r)
		}
		return "Net(" + r.Target + ")", nil
	case tool.KindToolInvoke:
		if !validToolName(r.Target) || strings.Contains(r.Target, "*") || strings.HasPrefix(r.Target, "mcp__") && !strings.Contains(r.Target[len("mcp__"):], "__") {
			return "", fmt.Errorf("%w: %v", ErrNotExact, r)
		}
		return r.Target, nil
	}
	return "", fmt.Errorf("%w: unknown kind %q", ErrNotExact, r.Kind)
}

// escapeGlob escapes the characters that are wildcards in rule text, and
// the backslash itself.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, c := range s {
		if c == '\\' || c == '*' || c == '?' {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// NewRecord is a rule to append to a file.
type NewRecord struct {
	Effect  Effect
	Match   string
	Reason  string
	Expires time.Time
}

// Writer appends rules to one rule file, typically the local layer's.
// Appends from many processes at once are serialised by a lock file next
// to it; each replaces the file atomically (temporary file in the same
// directory, fsync, rename, fsync of the directory), so a reader sees the
// old file or the new one, never a torn one. The file is mode 0600.
type Writer struct {
	Path string
	// Root, when set, is a directory Path must be inside, and the writer
	// never leaves it: every directory on the way to Path and the files
	// it opens (the rules, the lock, the temporary file) are opened one
	// name at a time without following a symlink, so a symlinked
	// ROOT/.airlock cannot send a rule into another project. The daemon
	// sets it to the workspace.
	Root string
}

// Append adds rules to the file, skipping any the file already has with
// the same effect, match and expiry. It checks every rule's match text and
// refuses a file that no longer parses rather than overwriting it.
func (w Writer) Append(recs ...NewRecord) error {
	if w.Path == "" {
		return errors.New("rules: Writer has no Path")
	}
	for _, rec := range recs {
		if _, err := ParseEffect(string(rec.Effect)); err != nil {
			return err
		}
		// Any base will do for checking the syntax.
		if _, err := ParsePattern(rec.Match, Base{Root: "/", Cwd: "/", Home: "/"}); err != nil {
			return err
		}
	}
	if w.Root != "" {
		return w.appendBeneath(recs)
	}
	dir := filepath.Dir(w.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("rules: create %s: %w", dir, err)
	}
	lock, err := os.OpenFile(w.Path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("rules: lock %s: %w", w.Path, err)
	}
	defer lock.Close()
	if err := flock(lock); err != nil {
		return fmt.Errorf("rules: lock %s: %w", w.Path, err)
	}
	// Closing the file releases the lock.

	old, err := os.ReadFile(w.Path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("rules: read %s: %w", w.Path, err)
	}
	content, err := merged(w.Path, old, recs)
	if err != nil || content == nil {
		return err
	}
	return replaceFile(w.Path, content)
}

// merged is the file's old content with recs appended, skipping any it
// has; nil when there is nothing to add.
func merged(path string, old []byte, recs []NewRecord) ([]byte, error) {
	var have fileRules
	if _, err := toml.Decode(string(old), &have); err != nil {
		return nil, fmt.Errorf("rules: %s does not parse, not writing to it: %w", path, err)
	}
	seen := map[string]bool{}
	for _, r := range have.Rule {
		exp := ""
		if t, ok := r.Expires.(time.Time); ok {
			exp = t.UTC().Format(time.RFC3339)
		}
		seen[r.Effect+"\x00"+r.Match+"\x00"+exp] = true
	}
	var add bytes.Buffer
	for _, rec := range recs {
		exp := ""
		if !rec.Expires.IsZero() {
			exp = rec.Expires.UTC().Truncate(time.Second).Format(time.RFC3339)
		}
		key := string(rec.Effect) + "\x00" + rec.Match + "\x00" + exp
		if seen[key] {
			continue
		}
		seen[key] = true
		add.WriteString("\n[[rule]]\n")
		fmt.Fprintf(&add, "effect = %s\n", tomlString(string(rec.Effect)))
		fmt.Fprintf(&add, "match = %s\n", tomlString(rec.Match))
		if rec.Reason != "" {
			fmt.Fprintf(&add, "reason = %s\n", tomlString(rec.Reason))
		}
		if exp != "" {
			fmt.Fprintf(&add, "expires = %s\n", exp)
		}
	}
	if add.Len() == 0 {
		return nil, nil
	}
	content := old
	if len(content) == 0 {
		content = []byte("# Rules airlock saved from \"always\" answers. Edit freely.\n")
	} else if content[len(content)-1] != '\n' {
		content = append(content, '\n')
	}
	content = append(content, add.Bytes()...)
	return content, nil
}

// replaceFile writes content to path atomically and durably.
func replaceFile(path string, content []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("rules: write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename this finds nothing
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("rules: write %s: %w", path, err)
	}
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return fmt.Errorf("rules: write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("rules: sync %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("rules: write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("rules: replace %s: %w", path, err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("rules: sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("rules: sync %s: %w", dir, err)
	}
	return nil
}

func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", c)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
