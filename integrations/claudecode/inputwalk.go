package claudecode

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/airlockhq/airlock/internal/jsonscan"
)

// inputWalker makes the one pass over the hook's input that ParseInput
// needs after json.Valid: it fails on a key that appears twice in one
// object, at any depth (two parsers could each take a different one), and
// keeps the top-level values as they are written. It relies on the text
// being valid JSON; where it is not (never, after json.Valid) it fails
// rather than guess.
type inputWalker struct {
	jsonscan.Scanner
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

func (w *inputWalker) value(depth int) error {
	w.Space()
	if w.I >= len(w.Data) {
		return errWalk
	}
	switch w.Data[w.I] {
	case '{':
		return w.object(depth)
	case '[':
		w.I++
		w.Space()
		if w.I < len(w.Data) && w.Data[w.I] == ']' {
			w.I++
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
	start, ok := w.Scalar()
	if !ok {
		return errWalk
	}
	if c := w.Data[start]; c == '-' || '0' <= c && c <= '9' {
		if _, err := strconv.ParseFloat(string(w.Data[start:w.I]), 64); err != nil {
			w.badNumber = true
		}
	}
	return nil
}

// object walks the object at "{", checking its keys.
func (w *inputWalker) object(depth int) error {
	w.I++ // "{"
	var few [manyKeys]string
	keys := few[:0]
	var seen map[string]bool
	for {
		w.Space()
		if w.I >= len(w.Data) {
			return errWalk
		}
		if w.Data[w.I] == '}' {
			w.I++
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
		if w.Space(); w.I >= len(w.Data) || w.Data[w.I] != ':' {
			return errWalk
		}
		w.I++
		w.Space()
		start := w.I
		w.path = append(w.path, pathStep{key: key})
		if err := w.value(depth + 1); err != nil {
			return err
		}
		w.path = w.path[:len(w.path)-1]
		if depth == 0 {
			w.top = append(w.top, topField{key: key, raw: w.Data[start:w.I]})
		}
		if end, err := w.after('}'); end || err != nil {
			return err
		}
	}
}

// after reads what follows an array's element or an object's member:
// end when it is close.
func (w *inputWalker) after(close byte) (end bool, err error) {
	end, ok := w.After(close)
	if !ok {
		return false, errWalk
	}
	return end, nil
}

// str reads the string at '"' and returns its value; only a string with
// an escape is decoded by encoding/json (as json.Decoder's tokens were).
func (w *inputWalker) str() (string, error) {
	v, ok := w.Str()
	if !ok {
		return "", errWalk
	}
	return v, nil
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
