package sandbox

import (
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/airlockhq/airlock/profile"
)

// globMatches lists what the workspace-relative protected wildcard entry
// rel matches in ws: filepath.Glob for an entry whose wildcards stay
// within names (".git/modules/*/hooks"), a walk for one with a "**"
// element ("**/.env", from a deny Edit(.env) rule): symlinks are not
// followed, nothing beneath a match is looked at (its read-only mount
// covers it), and at most gitWalkLimit entries are visited.
func globMatches(ws, rel string) []string {
	pattern := filepath.Join(ws, rel)
	if !slices.Contains(strings.Split(rel, "/"), "**") {
		matches, _ := filepath.Glob(pattern)
		return matches
	}
	var out []string
	budget := gitWalkLimit
	_ = filepath.WalkDir(ws, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if budget--; budget < 0 {
			return filepath.SkipAll
		}
		if path == ws {
			return nil
		}
		if profile.MatchGlob(pattern, path) {
			out = append(out, path)
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	return out
}

// guardGlobs are the protected wildcard entries the create guard refuses
// new names at, made absolute. Those inside .git are left to the
// end-of-run check, which tells what git makes in ordinary use (a new
// submodule's .git/modules/NAME/hooks) from what a run plants.
func guardGlobs(ws string, globs []string) []string {
	var out []string
	for _, g := range globs {
		if g == ".git" || strings.HasPrefix(g, ".git/") {
			continue
		}
		out = append(out, filepath.Join(ws, g))
	}
	return out
}

// searchedGlobs are the protected wildcard entries whose matches the
// start holds read-only and the end of the run looks at. With the create
// guard, a "**" entry outside .git is left to it (it refuses making and
// writing any name such an entry matches, when the call comes), so
// neither searches the workspace for one.
func searchedGlobs(globs []string, guarded bool) []string {
	if !guarded {
		return globs
	}
	var out []string
	for _, g := range globs {
		if slices.Contains(strings.Split(g, "/"), "**") && g != ".git" && !strings.HasPrefix(g, ".git/") {
			continue
		}
		out = append(out, g)
	}
	return out
}
