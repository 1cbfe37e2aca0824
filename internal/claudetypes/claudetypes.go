// Package claudetypes reads the tool and hook types that the Claude Agent
// SDK publishes on npm (@anthropic-ai/claude-agent-sdk: sdk-tools.d.ts
// and sdk.d.ts), from the copy pinned in
// integrations/claudecode/testdata/sdk, for tests that check airlock's
// Claude Code hook against them and build hook inputs shaped exactly like
// them.
//
// It reads only the plain shapes those generated files use (one
// "export interface NameInput {" per tool, a field per line at two
// spaces, TypeScript unions of literals); it is not a TypeScript parser.
// It does not decide anything, and nothing outside tests uses it.
package claudetypes

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// ErrNotInstalled is returned when the pinned package has not been
// installed (npm ci in integrations/claudecode/testdata/sdk).
var ErrNotInstalled = errors.New("claudetypes: the pinned @anthropic-ai/claude-agent-sdk is not installed; run npm ci --omit=optional --omit=peer in integrations/claudecode/testdata/sdk")

// Types are the published types of one SDK release.
type Types struct {
	// Version is the package's version.
	Version string
	// ToolNames are BUILTIN_TOOL_NAMES: the built-in tools as permission
	// rules and hook matchers spell them.
	ToolNames []string
	// Inputs are the "export interface ...Input" of sdk-tools.d.ts, by
	// interface name.
	Inputs map[string]Interface
	// PermissionModes are the members of PermissionMode.
	PermissionModes []string
	// HookDecisions are the members of HookPermissionDecision.
	HookDecisions []string
	// PreToolUseFields are the fields of BaseHookInput and
	// PreToolUseHookInput, the PreToolUse hook's stdin.
	PreToolUseFields []Field
	// CommandHookFields are the fields of a "type": "command" entry of
	// the settings' hooks (command, args, onFailure, ...).
	CommandHookFields []Field
}

// Interface is one input type.
type Interface struct {
	Name   string
	Fields []Field
}

// Field is one member of an interface.
type Field struct {
	Name     string
	Optional bool
	// Kind is the JSON type: 's' string, 'n' number, 'b' boolean, 'a'
	// array, 'o' object, '?' anything (unknown).
	Kind byte
	// Literals are the string literals of a union of them ("a" | "b").
	Literals []string
}

// Field returns the field name of the interface.
func (i Interface) Field(name string) (Field, bool) {
	for _, f := range i.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// Dir is the installed package's directory under the module root.
func Dir(moduleRoot string) string {
	return filepath.Join(moduleRoot, "integrations", "claudecode", "testdata", "sdk", "node_modules", "@anthropic-ai", "claude-agent-sdk")
}

// ModuleRoot finds the directory holding go.mod above dir.
func ModuleRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("claudetypes: no go.mod above %s", dir)
		}
	}
}

// Load reads the pinned package of the module that dir is in.
func Load(dir string) (*Types, error) {
	root, err := ModuleRoot(dir)
	if err != nil {
		return nil, err
	}
	pkg := Dir(root)
	meta, err := os.ReadFile(filepath.Join(pkg, "package.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNotInstalled
	}
	if err != nil {
		return nil, err
	}
	var pj struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(meta, &pj); err != nil {
		return nil, fmt.Errorf("claudetypes: %s/package.json: %v", pkg, err)
	}
	toolsDTS, err := os.ReadFile(filepath.Join(pkg, "sdk-tools.d.ts"))
	if err != nil {
		return nil, err
	}
	sdkDTS, err := os.ReadFile(filepath.Join(pkg, "sdk.d.ts"))
	if err != nil {
		return nil, err
	}
	// The files have been published with CRLF line ends.
	crlf := strings.NewReplacer("\r\n", "\n")
	t := &Types{Version: pj.Version, Inputs: interfaces(crlf.Replace(string(toolsDTS)))}
	sdk := crlf.Replace(string(sdkDTS))
	if t.ToolNames, err = literalList(sdk, `BUILTIN_TOOL_NAMES: readonly \[([^\]]*)\]`); err != nil {
		return nil, err
	}
	if t.PermissionModes, err = literalList(sdk, `type PermissionMode = ([^;]*);`); err != nil {
		return nil, err
	}
	if t.HookDecisions, err = literalList(sdk, `type HookPermissionDecision = ([^;]*);`); err != nil {
		return nil, err
	}
	for _, name := range []string{"BaseHookInput", "PreToolUseHookInput"} {
		fields, err := declaredType(sdk, name)
		if err != nil {
			return nil, err
		}
		t.PreToolUseFields = append(t.PreToolUseFields, fields...)
	}
	if t.CommandHookFields, err = commandHook(sdk); err != nil {
		return nil, err
	}
	if len(t.ToolNames) == 0 || len(t.Inputs) == 0 {
		return nil, fmt.Errorf("claudetypes: %s: no tool names or input types found; the files' shape changed", pkg)
	}
	return t, nil
}

// InputOf returns the input type of a tool name: NameInput, FileNameInput
// (Read, Write, Edit) or, for a name ending in "Tool", the name without
// it (ReadMcpResourceTool → ReadMcpResourceInput).
func (t *Types) InputOf(tool string) (Interface, bool) {
	for _, n := range []string{tool + "Input", "File" + tool + "Input", strings.TrimSuffix(tool, "Tool") + "Input"} {
		if i, ok := t.Inputs[n]; ok {
			return i, true
		}
	}
	return Interface{}, false
}

var (
	interfaceStart = regexp.MustCompile(`(?m)^export interface (\w+Input) \{(\})?$`)
	fieldLine      = regexp.MustCompile(`^  ("[^"]+"|[A-Za-z_$][\w$]*)(\??): ?(.*)$`)
	literal        = regexp.MustCompile(`'([^']*)'|"([^"]*)"`)
)

// interfaces reads every "export interface ...Input" of a .d.ts.
func interfaces(src string) map[string]Interface {
	out := map[string]Interface{}
	for _, m := range interfaceStart.FindAllStringSubmatchIndex(src, -1) {
		name := src[m[2]:m[3]]
		if m[4] >= 0 { // "{}": no fields
			out[name] = Interface{Name: name}
			continue
		}
		body := src[m[1]:]
		if end := strings.Index(body, "\n}"); end >= 0 {
			body = body[:end]
		}
		out[name] = Interface{Name: name, Fields: fields(strings.Split(body, "\n"))}
	}
	return out
}

// fields reads the members at two spaces of indentation; a type that
// continues on the next lines is judged by where it starts.
func fields(lines []string) []Field {
	var out []Field
	for i, line := range lines {
		m := fieldLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		typ := strings.TrimSpace(m[3])
		if typ == "" && i+1 < len(lines) {
			typ = strings.TrimSpace(lines[i+1])
		}
		f := Field{Name: strings.Trim(m[1], `"`), Optional: m[2] == "?"}
		f.Kind, f.Literals = kindOf(typ)
		if f.Kind == 'o' && !strings.HasSuffix(typ, ";") {
			// An object type over several lines: "}[];" where it closes
			// makes it an array of them.
			for _, l := range lines[i+1:] {
				if strings.HasPrefix(l, "  }") {
					if strings.HasPrefix(l, "  }[]") {
						f.Kind = 'a'
					}
					break
				}
			}
		}
		out = append(out, f)
	}
	return out
}

// kindOf is the JSON type of a TypeScript type's text.
func kindOf(typ string) (byte, []string) {
	typ = strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(typ), "|")), ";")
	switch {
	case strings.HasSuffix(typ, "[]"), strings.HasPrefix(typ, "["):
		return 'a', nil
	case strings.HasPrefix(typ, "{"):
		return 'o', nil
	case typ == "string":
		return 's', nil
	case typ == "number":
		return 'n', nil
	case typ == "boolean":
		return 'b', nil
	case strings.HasPrefix(typ, `"`), strings.HasPrefix(typ, `("`), strings.HasPrefix(typ, "'"):
		var lits []string
		for _, l := range literal.FindAllStringSubmatch(typ, -1) {
			lits = append(lits, l[1]+l[2])
		}
		return 's', lits
	}
	return '?', nil
}

// literalList returns the string literals in the first group of pattern.
func literalList(src, pattern string) ([]string, error) {
	m := regexp.MustCompile(pattern).FindStringSubmatch(src)
	if m == nil {
		return nil, fmt.Errorf("claudetypes: sdk.d.ts has nothing matching %s; the file's shape changed", pattern)
	}
	var out []string
	for _, l := range literal.FindAllStringSubmatch(m[1], -1) {
		out = append(out, l[1]+l[2])
	}
	return out, nil
}

// declaredType reads the fields of "export declare type NAME = ... {".
func declaredType(src, name string) ([]Field, error) {
	re := regexp.MustCompile(`(?m)^export declare type ` + name + ` = [^{]*\{\n`)
	loc := re.FindStringIndex(src)
	if loc == nil {
		return nil, fmt.Errorf("claudetypes: sdk.d.ts declares no %s; the file's shape changed", name)
	}
	body := src[loc[1]:]
	if end := strings.Index(body, "\n};"); end >= 0 {
		body = body[:end]
	}
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		// sdk.d.ts indents members by four spaces.
		if strings.HasPrefix(l, "    ") && !strings.HasPrefix(l, "     ") {
			lines = append(lines, l[2:])
		}
	}
	return fields(lines), nil
}

// commandHook reads the settings' hook entry of "type: 'command'" (the
// one documented as "Shell command hook type"):
// its members, indented alike, up to where the next kind of entry starts.
func commandHook(src string) ([]Field, error) {
	anchor := strings.Index(src, "Shell command hook type")
	i := -1
	if anchor >= 0 {
		if j := strings.Index(src[anchor:], "type: 'command';"); j >= 0 {
			i = anchor + j
		}
	}
	if i < 0 {
		return nil, errors.New("claudetypes: sdk.d.ts has no command hook entry; the file's shape changed")
	}
	start := strings.LastIndexByte(src[:i], '\n') + 1
	indent := src[start:i]
	var lines []string
	for _, l := range strings.Split(src[start:], "\n") {
		if !strings.HasPrefix(l, indent) {
			break // "} | {": the entry ends
		}
		if !strings.HasPrefix(l, indent+" ") {
			lines = append(lines, "  "+l[len(indent):])
		}
	}
	return fields(lines), nil
}

// Omit, as an override's value, leaves the field out of a Sample.
var Omit = &struct{ omit bool }{true}

// Sample is an input of the interface with every field the type
// declares, each holding a value of its type (the first literal of a
// union, "x", 1, true, [], {}), then overrides applied: a value replaces
// a field's, Omit removes it. An override naming a field the type does
// not have is an error, so a fixture cannot drift from the type.
func (i Interface) Sample(overrides map[string]any) (map[string]any, error) {
	out := map[string]any{}
	for _, f := range i.Fields {
		switch f.Kind {
		case 's':
			v := "x"
			if len(f.Literals) > 0 {
				v = f.Literals[0]
			}
			out[f.Name] = v
		case 'n':
			out[f.Name] = 1
		case 'b':
			out[f.Name] = true
		case 'a':
			out[f.Name] = []any{}
		default:
			out[f.Name] = map[string]any{}
		}
	}
	keys := make([]string, 0, len(overrides))
	for k := range overrides {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := i.Field(k); !ok {
			return nil, fmt.Errorf("claudetypes: %s has no field %q", i.Name, k)
		}
		if v := overrides[k]; v == Omit {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out, nil
}
