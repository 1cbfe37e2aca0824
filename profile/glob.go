package profile

import (
	"path/filepath"
	"strings"
)

// MatchGlob reports whether the absolute path p matches the absolute glob
// pattern. Within one path element the syntax of filepath.Match applies;
// an element "**" matches any number of elements, including none.
func MatchGlob(pattern, p string) bool {
	return matchParts(splitPath(pattern), splitPath(p))
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func matchParts(pat, parts []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(parts); i++ {
				if matchParts(pat[1:], parts[i:]) {
					return true
				}
			}
			return false
		}
		if len(parts) == 0 {
			return false
		}
		if ok, err := filepath.Match(pat[0], parts[0]); err != nil || !ok {
			return false
		}
		pat, parts = pat[1:], parts[1:]
	}
	return len(parts) == 0
}
