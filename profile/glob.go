package profile

import "github.com/airlockhq/airlock/internal/pathglob"

// MatchGlob reports whether the absolute path p matches the absolute glob
// pattern. Within one path element the syntax of filepath.Match applies;
// an element "**" matches any number of elements, including none.
func MatchGlob(pattern, p string) bool { return pathglob.Match(pattern, p) }

func splitPath(p string) []string { return pathglob.Split(p) }

func matchParts(pat, parts []string) bool { return pathglob.MatchElements(pat, parts) }
