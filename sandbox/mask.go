package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/airlockhq/airlock/profile"
)

// maskedPaths lists the existing paths the sandbox must hide:
//
//   - every path matching a deny glob,
//   - every unix socket in the workspace (a host listener) but those the
//     profile names, unless the unix socket guard refuses connects to
//     them (sockets.guarded), and
//   - every file in the workspace that is a hard link to a secret with
//     links outside the workspace: the same inode as a secret elsewhere
//     (say ~/.ssh/id_ed25519) would otherwise be readable and writable
//     through the workspace. A secret is judged as the system paths are
//     (systemidmap.go), by what it is: a file not every user may read.
//
// It also lists, in sharedLinks, the other hard links with links outside
// the workspace (a repository cloned from a local path, a pnpm or uv
// store's files): readable, and read-only in the view, since a write
// through the workspace would change the file elsewhere too. Past
// maxSharedLinks such files, the rest are masked, and overflow says how
// many.
//
// With links.atOpen the supervisor checks hard links at each open
// instead (linkwatch.go), in time independent of the workspace's size:
// then no file is lstat'd here, and when the sockets are guarded too and
// no "**" deny glob can match inside the workspace, the workspace is not
// read at all.
//
// Globs without "**" are expanded with filepath.Glob; globs with "**" and
// the hard-link check share one walk of the workspace.
func maskedPaths(p *profile.Profile, o maskOptions) (out, sharedLinks []string, overflow int, err error) {
	s := p.Spec()
	ws := s.Workspace
	seen := map[string]bool{}
	add := func(path string) {
		if !seen[path] {
			seen[path] = true
			out = append(out, path)
		}
	}
	var deep []string
	for _, g := range s.Filesystem.Deny {
		if strings.Contains(g, "**") {
			deep = append(deep, g)
			continue
		}
		matches, _ := filepath.Glob(g)
		for _, m := range matches {
			add(m)
		}
	}
	type inode struct{ dev, ino uint64 }
	links := map[inode][]string{}
	nlink := map[inode]uint64{}
	secret := map[inode]bool{}
	if o.needsWalk(ws, deep) {
		err = walkTree(ws, func(e walkEntry, err error) error {
			path := e.path
			if err != nil {
				if path == ws {
					return err
				}
				// A part the scan cannot read may hide a hard link, and the
				// command may own it and chmod it open: hide all of it.
				add(path)
				return nil
			}
			for _, g := range deep {
				if profile.MatchGlob(g, path) {
					add(path)
					if e.typ.IsDir() {
						return filepath.SkipDir
					}
					return nil
				}
			}
			if e.typ&fs.ModeSocket != 0 && !o.socketsGuarded && !socketsMaskExempt(s, path) {
				// A socket in the workspace is a door to whatever host
				// process listens on it. The unix socket guard refuses
				// connects to it (unixguard.go); the mask keeps it hidden
				// on hosts without the guard too.
				add(path)
				return nil
			}
			if e.typ.IsRegular() && !o.linksAtOpen {
				st, err := e.lstat()
				if err != nil {
					if !errors.Is(err, fs.ErrNotExist) {
						add(path) // unreadable metadata: same reason as above
					}
					return nil
				}
				if st.Nlink > 1 {
					k := inode{st.Dev, st.Ino}
					links[k] = append(links[k], path)
					nlink[k] = uint64(st.Nlink)
					secret[k] = st.Mode&0o004 == 0
				}
			}
			return nil
		})
	}
	if err != nil {
		return nil, nil, 0, &SetupError{Step: "scan workspace", Err: err}
	}
	// Deep globs outside the workspace are matched from their fixed root.
	for _, g := range deep {
		root := globRoot(g)
		if profile.Within(ws, root) || profile.Within(root, ws) {
			continue
		}
		if _, err := os.Stat(root); err != nil {
			continue
		}
		visited := 0
		walkErr := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if visited++; visited > maxGlobWalk {
				return errGlobTooBroad
			}
			if err == nil && profile.MatchGlob(g, path) {
				add(path)
				if d.IsDir() {
					return filepath.SkipDir
				}
			}
			return nil
		})
		if walkErr != nil {
			return nil, nil, 0, &SetupError{Step: "deny glob " + g, Err: walkErr}
		}
	}
	for k, paths := range links {
		if uint64(len(paths)) >= nlink[k] {
			continue // every link is in the workspace
		}
		for _, path := range paths {
			switch {
			case seen[path]:
			case secret[k]:
				add(path)
			case len(sharedLinks) < maxSharedLinks:
				sharedLinks = append(sharedLinks, path)
			default:
				overflow++
				add(path)
			}
		}
	}
	sort.Strings(sharedLinks)
	return out, sharedLinks, overflow, nil
}

// maskOptions says what the supervisor checks at the call itself, which
// the masks then need not cover.
type maskOptions struct {
	// linksAtOpen: the deny watch refuses, at open, the workspace's
	// hard links to secrets and writes to its other hard links
	// (linkwatch.go).
	linksAtOpen bool
	// socketsGuarded: the unix socket guard refuses connects to every
	// socket the profile does not name (unixguard.go).
	socketsGuarded bool
}

// needsWalk reports whether the workspace must be read: for hard links,
// for sockets, or because a "**" deny glob can match inside it.
func (o maskOptions) needsWalk(ws string, deep []string) bool {
	if !o.linksAtOpen || !o.socketsGuarded {
		return true
	}
	parts := splitGlobPath(ws)
	for _, g := range deep {
		if newDenyGlob(g).canMatchBeneath(ws, parts) {
			return true
		}
	}
	return false
}

// maxSharedLinks bounds the read-only mounts of shared hard links one
// view gets (a mount each); the kernel allows 100,000 per namespace by
// default, and each costs the start a few microseconds.
const maxSharedLinks = 20000

// maxGlobWalk caps how many entries one "**" deny glob outside the
// workspace may scan; a broader glob is an error, not a slow start.
const maxGlobWalk = 50000

var errGlobTooBroad = errors.New("matches under a tree of more than 50000 entries; start the pattern at a narrower directory")

// globRoot is the longest leading part of an absolute pattern without
// wildcards.
func globRoot(pattern string) string {
	root := "/"
	for _, el := range strings.Split(strings.Trim(pattern, "/"), "/") {
		if strings.ContainsAny(el, "*?[\\") {
			break
		}
		root = filepath.Join(root, el)
	}
	return root
}

// linksMaskedDenial is the refusal of a run whose workspace holds more
// shared hard links than maxSharedLinks: the rest were masked.
func (p *Process) linksMaskedDenial() (Denial, bool) {
	n := p.plan.linksMasked
	if n == 0 {
		return Denial{}, false
	}
	return Denial{Kind: "filesystem", Target: p.e.profile.Workspace(), Live: p.stderr != nil,
		Reason: fmt.Sprintf("read refused: %d hard-linked files (with links outside the workspace) past the first %d are masked; copy them (cp -a --no-preserve=links) to make them readable", n, maxSharedLinks)}, true
}
