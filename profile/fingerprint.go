package profile

import (
	"encoding/json"
	"sort"
	"strconv"

	"github.com/airlockhq/airlock/internal/jsonquote"
)

// specJSON returns json.Marshal(s), written field by field. The first
// json.Marshal of a Spec in a process builds encoding/json's reflection
// tables for all of Spec's types, which cost more than the rest of New
// (about 0.13 ms of every hook call and of every run's start, once or
// twice each). The bytes must stay exactly json.Marshal's: they are what
// the fingerprint hashes, and a grant or an audit line made by another
// build must match. TestSpecJSON compares the two for a Spec with every
// field set, filled by reflection, so a field added to Spec and not here
// fails there instead of silently leaving the fingerprint.
func specJSON(s *Spec) ([]byte, error) {
	b := make([]byte, 0, 1024)
	b = append(b, '{')
	if s.Preset != "" {
		b = jsonKey(b, "preset")
		b = jsonquote.Append(b, s.Preset)
	}
	b = jsonKey(b, "workspace")
	b = jsonquote.Append(b, s.Workspace)
	if s.ForceWorkspace {
		b = jsonKey(b, "force_workspace")
		b = append(b, "true"...)
	}
	if s.ReadOnlyWorkspace {
		b = jsonKey(b, "read_only_workspace")
		b = append(b, "true"...)
	}
	if s.AutoAllowInSandbox != nil {
		b = jsonKey(b, "auto_allow_in_sandbox")
		b = strconv.AppendBool(b, *s.AutoAllowInSandbox)
	}

	f := &s.Filesystem
	b = jsonKey(b, "filesystem")
	b = append(b, '{')
	b = jsonList(b, "read", f.Read)
	b = jsonList(b, "write", f.Write)
	b = jsonList(b, "deny", f.Deny)
	b = jsonList(b, "protected", f.Protected)
	b = jsonList(b, "exec", f.Exec)
	b = jsonList(b, "sockets", f.Sockets)
	b = append(b, '}')

	b = jsonKey(b, "env")
	b = append(b, '{')
	b = jsonList(b, "allow", s.Env.Allow)
	if len(s.Env.Set) > 0 {
		b = jsonKey(b, "set")
		keys := make([]string, 0, len(s.Env.Set))
		for k := range s.Env.Set {
			keys = append(keys, k)
		}
		sort.Strings(keys) // as encoding/json orders a map's keys
		b = append(b, '{')
		for _, k := range keys {
			b = jsonKey(b, k)
			b = jsonquote.Append(b, s.Env.Set[k])
		}
		b = append(b, '}')
	}
	b = append(b, '}')

	n := &s.Network
	b = jsonKey(b, "network")
	b = append(b, '{')
	if n.Mode != "" {
		b = jsonKey(b, "mode")
		b = jsonquote.Append(b, n.Mode)
	}
	b = jsonList(b, "allow", n.Allow)
	b = jsonList(b, "deny", n.Deny)
	b = jsonList(b, "publish_addresses", n.PublishAddresses)
	b = append(b, '}')

	g := &s.Budgets
	b = jsonKey(b, "budgets")
	b = append(b, '{')
	b = jsonSize(b, "memory", g.Memory)
	if g.Pids != 0 {
		b = jsonKey(b, "pids")
		b = strconv.AppendInt(b, int64(g.Pids), 10)
	}
	if g.CPU != 0 {
		// encoding/json's float format (and its error for NaN) is not
		// worth repeating for the one float.
		v, err := json.Marshal(g.CPU)
		if err != nil {
			return nil, err
		}
		b = jsonKey(b, "cpu")
		b = append(b, v...)
	}
	if g.WallTime != 0 {
		b = jsonKey(b, "wall_time")
		b = jsonquote.Append(b, durationText(g.WallTime))
	}
	b = jsonSize(b, "output", g.Output)
	b = jsonSize(b, "scratch", g.Scratch)
	b = jsonSize(b, "max_write", g.MaxWrite)
	b = append(b, '}')

	b = jsonList(b, "require", s.Require)
	if len(s.Enforced) > 0 {
		b = jsonKey(b, "enforced")
		b = append(b, '[')
		for i, e := range s.Enforced {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			b = jsonKey(b, "rule")
			b = jsonquote.Append(b, e.Rule)
			if e.Source != "" {
				b = jsonKey(b, "source")
				b = jsonquote.Append(b, e.Source)
			}
			b = jsonKey(b, "kernel")
			b = strconv.AppendBool(b, e.Kernel)
			if e.Mechanism != "" {
				b = jsonKey(b, "mechanism")
				b = jsonquote.Append(b, e.Mechanism)
			}
			if e.Note != "" {
				b = jsonKey(b, "note")
				b = jsonquote.Append(b, e.Note)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

// durationText is Duration's MarshalText, which cannot fail.
func durationText(d Duration) string {
	t, _ := d.MarshalText()
	return string(t)
}

// jsonKey appends a member's key and its colon, after a comma unless it
// is the object's first.
func jsonKey(b []byte, k string) []byte {
	if b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	b = jsonquote.Append(b, k)
	return append(b, ':')
}

// jsonList appends an omitempty []string member.
func jsonList(b []byte, k string, list []string) []byte {
	if len(list) == 0 {
		return b
	}
	b = jsonKey(b, k)
	b = append(b, '[')
	for i, v := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonquote.Append(b, v)
	}
	return append(b, ']')
}

// jsonSize appends an omitempty Size member, as its MarshalText.
func jsonSize(b []byte, k string, s Size) []byte {
	if s == 0 {
		return b
	}
	b = jsonKey(b, k)
	return jsonquote.Append(b, s.String())
}
