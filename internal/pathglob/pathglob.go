// Package pathglob matches absolute paths against the path globs of
// profiles (deny and protected entries): within one path element the
// syntax of path.Match applies; an element "**" matches any number of
// elements, including none. It is a package of its own so that the
// sandbox's helper processes, which do not link the profile package's
// validation, match exactly as the supervisor does. It uses package path,
// not path/filepath: the stage-2 helper imports it and must not
// initialise path/filepath (see sandbox/internal/linux/netaddr.go).
package pathglob

import (
	"path"
	"strings"
)

// Match reports whether the absolute path p matches pattern.
func Match(pattern, p string) bool {
	return MatchElements(Split(pattern), Split(p))
}

// MatchOrParent reports whether pattern matches p or one of its parent
// directories: a glob about a directory is about all it holds.
func MatchOrParent(pattern, p string) bool {
	pat, parts := Split(pattern), Split(p)
	for n := len(parts); n >= 0; n-- {
		if MatchElements(pat, parts[:n]) {
			return true
		}
	}
	return false
}

// Split returns the elements of an absolute path or pattern.
func Split(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// MatchElements matches path elements against pattern elements.
func MatchElements(pat, parts []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(parts); i++ {
				if MatchElements(pat[1:], parts[i:]) {
					return true
				}
			}
			return false
		}
		if len(parts) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], parts[0]); err != nil || !ok {
			return false
		}
		pat, parts = pat[1:], parts[1:]
	}
	return len(parts) == 0
}
