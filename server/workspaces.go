package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"

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
