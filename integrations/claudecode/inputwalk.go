package claudecode

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// inputWalker makes the one pass over the hook's input that ParseInput
// needs after json.Valid: it fails on a key that appears twice in one
// object, at any depth (two parsers could each take a different one), and
// keeps the top-level values as they are written. It relies on the text
// being valid JSON; where it is not (never, after json.Valid) it fails
// rather than guess.
type inputWalker struct {
	data []byte
	i    int
	// path is where the walk is, for the message: keys and indexes
	// below "$", made into text only when a duplicate is found.
	path []pathStep
	// top are the top-level keys and their values, in document order.
	top []topField
	// dup is the first key found twice; the walk goes on past it, for
	// badNumber.
	dup error
	// badNumber: a number float64 cannot hold (1e400), which
	// json.Unmarshal into an interface refuses and json.Valid does not.
	badNumber bool
}

type pathStep struct {
	key   string
	index int // when key is "" and isIndex
	isIdx bool
}

type topField struct {
	key string
	raw json.RawMessage
}

// manyKeys is where an object's duplicate check moves from comparing
// each key with the ones before to a map: a 4 MiB input of one object
// with a million short keys must not cost a quadratic walk.
const manyKeys = 16

// walk walks the whole text. Its error is only for text that is not
// valid JSON; a duplicate key is in w.dup.
func (w *inputWalker) walk() error {
	return w.value(0)
}

// field returns the top-level value of key, as written.
func (w *inputWalker) field(key string) (json.RawMessage, bool) {
	for _, f := range w.top {
		if f.key == key {
			return f.raw, true
		}
	}
	return nil, false
}

// errWalk is a literal, not an inputErr call: nothing of fmt at init.
var errWalk = &InputError{Problem: "is not valid JSON"}

func (w *inputWalker) space() {
	for w.i < len(w.data) {
		switch w.data[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

func (w *inputWalker) value(depth int) error {
	w.space()
	if w.i >= len(w.data) {
		return errWalk
	}
	switch w.data[w.i] {
	case '{':
		return w.object(depth)
	case '[':
		w.i++
		w.space()
		if w.i < len(w.data) && w.data[w.i] == ']' {
			w.i++
			return nil
		}
		for n := 0; ; n++ {
			w.path = append(w.path, pathStep{index: n, isIdx: true})
			if err := w.value(depth + 1); err != nil {
				return err
			}
			w.path = w.path[:len(w.path)-1]
			if end, err := w.after(']'); end || err != nil {
				return err
			}
		}
	case '"':
		_, err := w.str()
		return err
	}
	// A number, true, false or null: up to the next delimiter.
	start := w.i
	for w.i < len(w.data) && !strings.ContainsRune(",}] \t\n\r", rune(w.data[w.i])) {
		w.i++
	}
	if w.i == start {
		return errWalk
	}
	if c := w.data[start]; c == '-' || '0' <= c && c <= '9' {
		if _, err := strconv.ParseFloat(string(w.data[start:w.i]), 64); err != nil {
			w.badNumber = true
		}
	}
	return nil
}

// object walks the object at "{", checking its keys.
func (w *inputWalker) object(depth int) error {
	w.i++ // "{"
	var few [manyKeys]string
	keys := few[:0]
	var seen map[string]bool
	for {
		w.space()
		if w.i >= len(w.data) {
			return errWalk
		}
		if w.data[w.i] == '}' {
			w.i++
			return nil
		}
		key, err := w.str()
		if err != nil {
			return err
		}
		dup := false
		if seen != nil {
			dup = seen[key]
			seen[key] = true
		} else {
			for _, k := range keys {
				dup = dup || k == key
			}
			if keys = append(keys, key); len(keys) > manyKeys {
				seen = make(map[string]bool, 2*manyKeys)
				for _, k := range keys {
					seen[k] = true
				}
			}
		}
		if dup && w.dup == nil {
			w.dup = inputErr("has the key %q twice in %s", key, w.pathText())
		}
		if w.space(); w.i >= len(w.data) || w.data[w.i] != ':' {
			return errWalk
		}
		w.i++
		w.space()
		start := w.i
		w.path = append(w.path, pathStep{key: key})
		if err := w.value(depth + 1); err != nil {
			return err
		}
		w.path = w.path[:len(w.path)-1]
		if depth == 0 {
			w.top = append(w.top, topField{key: key, raw: w.data[start:w.i]})
		}
		if end, err := w.after('}'); end || err != nil {
			return err
		}
	}
}

// after reads what follows an array's element or an object's member: a
// comma (more follow, end false) or close (end true); anything else is
// invalid.
func (w *inputWalker) after(close byte) (end bool, err error) {
	w.space()
	if w.i >= len(w.data) {
		return false, errWalk
	}
	w.i++
	switch w.data[w.i-1] {
	case ',':
		return false, nil
	case close:
		return true, nil
	}
	return false, errWalk
}

// str reads the string at '"' and returns its value; only a string with
// an escape is decoded by encoding/json (as json.Decoder's tokens were).
func (w *inputWalker) str() (string, error) {
	if w.i >= len(w.data) || w.data[w.i] != '"' {
		return "", errWalk
	}
	start := w.i
	escaped := false
	for w.i++; w.i < len(w.data); w.i++ {
		switch w.data[w.i] {
		case '\\':
			escaped = true
			w.i++
		case '"':
			w.i++
			raw := w.data[start:w.i]
			if !escaped {
				return string(raw[1 : len(raw)-1]), nil
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return "", errWalk
			}
			return s, nil
		}
	}
	return "", errWalk
}

// pathText is the walk's place as the message names it: "$", "$.a.b",
// "$.edits[2]".
func (w *inputWalker) pathText() string {
	var b strings.Builder
	b.WriteString("$")
	for _, s := range w.path {
		if s.isIdx {
			fmt.Fprintf(&b, "[%d]", s.index)
		} else {
			b.WriteString(".")
			b.WriteString(s.key)
		}
	}
	return b.String()
}
