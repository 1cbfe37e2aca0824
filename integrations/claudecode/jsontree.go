package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/airlockhq/airlock/internal/jsonquote"
)

// node is a JSON value that keeps its objects' key order, so that a
// settings file we add one hook to comes back with everything else where
// its owner put it. Scalars keep their text (numbers exactly as written;
// strings re-encoded only if they had escapes we normalise).
type node struct {
	kind    byte // '{', '[' or 0 for a scalar
	members []member
	items   []*node
	raw     json.RawMessage
}

type member struct {
	key   string
	value *node
}

// parseTree parses one JSON document, refusing duplicate keys (which
// Claude Code would resolve one way and a reviewer might read another).
func parseTree(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := parseNode(dec, "$")
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("there is more after the JSON object")
	}
	return n, nil
}

func parseNode(dec *json.Decoder, path string) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &node{kind: '{'}
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key := kt.(string)
				if seen[key] {
					return nil, fmt.Errorf("the key %q appears twice in %s", key, path)
				}
				seen[key] = true
				v, err := parseNode(dec, path+"."+key)
				if err != nil {
					return nil, err
				}
				n.members = append(n.members, member{key, v})
			}
			_, err := dec.Token()
			return n, err
		case '[':
			n := &node{kind: '['}
			for i := 0; dec.More(); i++ {
				v, err := parseNode(dec, fmt.Sprintf("%s[%d]", path, i))
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, v)
			}
			_, err := dec.Token()
			return n, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case json.Number:
		return &node{raw: json.RawMessage(t.String())}, nil
	default:
		raw, err := marshalNoEscape(t)
		return &node{raw: raw}, err
	}
}

func marshalNoEscape(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimSpace(b.Bytes())), nil
}

func stringNode(s string) *node {
	return &node{raw: jsonquote.AppendNoHTMLEscape(nil, s)}
}

// get returns the value of key in an object, or nil.
func (n *node) get(key string) *node {
	for _, m := range n.members {
		if m.key == key {
			return m.value
		}
	}
	return nil
}

// set replaces key's value, or appends key at the end.
func (n *node) set(key string, v *node) {
	for i := range n.members {
		if n.members[i].key == key {
			n.members[i].value = v
			return
		}
	}
	n.members = append(n.members, member{key, v})
}

// str returns a string scalar's value and whether n is one.
func (n *node) str() (string, bool) {
	if n == nil || n.kind != 0 || len(n.raw) == 0 || n.raw[0] != '"' {
		return "", false
	}
	var s string
	err := json.Unmarshal(n.raw, &s)
	return s, err == nil
}

// encode writes n indented by two spaces, as Claude Code writes its
// settings.
func (n *node) encode(b *strings.Builder, indent string) {
	switch n.kind {
	case '{':
		if len(n.members) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, m := range n.members {
			b.WriteString(indent + "  ")
			b.Write(jsonquote.AppendNoHTMLEscape(nil, m.key))
			b.WriteString(": ")
			m.value.encode(b, indent+"  ")
			if i < len(n.members)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "}")
	case '[':
		if len(n.items) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, v := range n.items {
			b.WriteString(indent + "  ")
			v.encode(b, indent+"  ")
			if i < len(n.items)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "]")
	default:
		b.Write(n.raw)
	}
}
