package profile

import (
	"os"
	"path/filepath"
)

// WorkspaceMarkers are the entries that make a directory a project root
// for FindWorkspace: airlock's own directory and a git checkout.
var WorkspaceMarkers = []string{".airlock", ".git"}

// FindWorkspace returns the project dir belongs to: the nearest directory
// from dir upwards that holds one of WorkspaceMarkers or of extra, so that
// a command started in a subdirectory gets the whole project as its
// workspace. The search stops below the home directory and below the
// filesystem root, which are never chosen: a dotfiles checkout in $HOME
// must not make every file of the user writable. When nothing is found
// the answer is dir itself. dir must be absolute and clean.
func FindWorkspace(dir string, extra ...string) string {
	home, _ := os.UserHomeDir()
	if home != "" {
		home = filepath.Clean(home)
	}
	markers := append(append([]string(nil), WorkspaceMarkers...), extra...)
	for d := dir; ; {
		if d == home || d == "/" {
			return dir
		}
		for _, m := range markers {
			if _, err := os.Lstat(filepath.Join(d, m)); err == nil {
				return d
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}
