package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/server/store"
)

// ErrWorkspace marks a path that is no workspace: not absolute, not an
// existing directory.
var ErrWorkspace = errors.New("server: not a workspace")

// CanonicalWorkspace is the one spelling of a workspace directory:
// absolute, clean, with every symlink resolved, so the registry, the
// tokens' scopes and the approvals all name a directory alike, and a
// symlink swapped in later no longer matches.
func CanonicalWorkspace(path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("%w: %q is not an absolute path", ErrWorkspace, path)
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(path))
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrWorkspace, path, err)
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%w: %q is not a directory", ErrWorkspace, path)
	}
	return real, nil
}

// RegisterWorkspace registers dir, made canonical, and returns its path.
func RegisterWorkspace(ctx context.Context, st store.Store, dir string, at store.Workspace) (string, error) {
	c, err := CanonicalWorkspace(dir)
	if err != nil {
		return "", err
	}
	at.Path = c
	return c, st.AddWorkspace(ctx, at)
}

// workspaceError is a refusal of the workspace a request names.
type workspaceError struct {
	status int
	code   string
	msg    string
}

func (e *workspaceError) write(w http.ResponseWriter) { writeError(w, e.status, e.code, e.msg) }

// workspaceFor checks that the token may act on the workspace a request
// names and returns its canonical path: one of the token's own
// workspaces, or, for a token that names none, one an operator registered.
func (s *Server) workspaceFor(ctx context.Context, t store.Token, path string) (string, *workspaceError) {
	ws, err := CanonicalWorkspace(path)
	if err != nil {
		return "", &workspaceError{http.StatusBadRequest, "bad_request", fmt.Sprintf(`"workspace": %v; name an existing directory on the daemon's machine by its absolute path`, err)}
	}
	if len(t.Workspaces) > 0 {
		if slices.Contains(t.Workspaces, ws) {
			return ws, nil
		}
		return "", &workspaceError{http.StatusForbidden, "workspace_not_allowed", fmt.Sprintf("token %s may act only on %v, not on %s", t.ID, t.Workspaces, ws)}
	}
	ok, err := s.st.WorkspaceRegistered(ctx, ws)
	if err != nil {
		return "", &workspaceError{http.StatusInternalServerError, "internal", "looking up the workspace: " + err.Error()}
	}
	if !ok {
		return "", &workspaceError{http.StatusForbidden, "workspace_not_registered", fmt.Sprintf("the workspace %s is not registered with this daemon; an operator registers it with 'airlock serve workspace add %s' (or makes a token for it with --workspace)", ws, ws)}
	}
	return ws, nil
}

// policyConfined refuses a workspace whose policy files (each rule file of
// the workspace's layers, its profile) would be read through a symlink:
// the workspace's policy is its own files, not another project's.
func policyConfined(ws string) error {
	paths := []string{filepath.Join(ws, profile.WorkspaceFile)}
	for _, f := range (rules.Sources{Workspace: ws}).Files() {
		paths = append(paths, f.Path)
	}
	for _, p := range paths {
		rel, err := filepath.Rel(ws, p)
		if err != nil || !filepath.IsLocal(rel) {
			continue // a layer outside the workspace (the user's, the managed one)
		}
		at := ws
		for _, name := range strings.Split(rel, string(filepath.Separator)) {
			at = filepath.Join(at, name)
			fi, err := os.Lstat(at)
			if err != nil {
				break // not there: nothing is read from it
			}
			if fi.Mode()&os.ModeSymlink != 0 {
				return fmt.Errorf("%s is a symlink; the daemon reads a workspace's policy only from its own files (replace the link with a real file or directory)", at)
			}
		}
	}
	return nil
}
