package rules

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/airlockhq/airlock/tool"
)

// MCP tool rules may look at one argument: mcp__server__tool(ARG:GLOB)
// matches the calls of that tool whose top-level argument ARG matches GLOB
// ("*" is any text, "/" included). A string argument is matched as it is,
// a number or boolean as its JSON text, an array element by element
// (an allow rule needs every element to match, a deny or ask rule one).
// A call without ARG is not matched: the rule is about that argument.
//
// The server, not airlock, decides what an argument means: "/work/../etc"
// matches "/work/*". An allow rule with an argument pattern narrows what
// is allowed without asking; the sandbox the server runs in is still the
// boundary for paths.

// argPattern is the argument part of an MCP tool rule.
type argPattern struct {
	name string
	glob *glob
}

// parseArgPattern parses the "ARG:GLOB" specifier of the MCP tool rule for
// tool name.
func parseArgPattern(name, spec string) (*argPattern, error) {
	rest, ok := strings.CutPrefix(name, "mcp__")
	server, toolName, ok2 := strings.Cut(rest, "__")
	if !ok || !ok2 || server == "" || toolName == "" || strings.HasSuffix(name, "*") {
		return nil, errors.New("only one MCP tool (mcp__server__tool) takes an argument pattern; write the name alone for every use")
	}
	arg, g, ok := strings.Cut(spec, ":")
	arg = strings.TrimSpace(arg)
	if !ok || arg == "" || !validToolName(arg) || strings.Contains(arg, "*") || g == "" {
		return nil, errors.New("write " + name + "(ARG:PATTERN) with an argument name and a pattern, e.g. mcp__fs__write_file(path:/tmp/*)")
	}
	return &argPattern{name: arg, glob: compileCommand(g)}, nil
}

// match reports whether the requirement's arguments (a JSON object) have
// the argument, matching in mode.
func (a *argPattern) match(r tool.Requirement, mode matchMode) bool {
	var args map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.Args), &args); err != nil {
		return false
	}
	raw, ok := args[a.name]
	if !ok {
		return false
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return false
	}
	list, isList := v.([]any)
	if !isList {
		return a.matchValue(v, raw)
	}
	if len(list) == 0 {
		return false
	}
	for _, e := range list {
		b, _ := json.Marshal(e)
		m := a.matchValue(e, b)
		if mode == strict && !m {
			return false
		}
		if mode == conservative && m {
			return true
		}
	}
	return mode == strict
}

func (a *argPattern) matchValue(v any, raw []byte) bool {
	s, ok := v.(string)
	if !ok {
		s = string(raw)
	}
	// matchString must not see a Hole; argument text is literal.
	return a.glob.matchString(strings.ReplaceAll(s, string(tool.Hole), "\uFFFD"))
}
