package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// serverBinary is the name of the binary that holds mcp, exec and serve,
// looked for in the directory of airlock's own executable.
const serverBinary = "airlock-server"

// handOff is the entry of a command that lives in airlock-server: it
// replaces this process with airlock-server running the same command
// line, so the caller (an agent's MCP configuration, a service unit) sees
// one process whose pid, stdio and exit status are the command's. It
// returns only when the exec fails.
func handOff(name string) func(args []string, stdout, stderr io.Writer) int {
	return func(args []string, _, stderr io.Writer) int {
		path, err := serverPath()
		if err == nil {
			err = syscall.Exec(path, append([]string{path, name}, args...), os.Environ())
		}
		fmt.Fprintf(stderr, "airlock %s: %v\n", name, err)
		return exitUsage
	}
}

// serverPath is airlock-server beside the running airlock (its real
// path: a symlink to airlock finds the server beside the target), or an
// error that says how to get it there.
func serverPath() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot find airlock's own executable to look for %s beside it: %w", serverBinary, err)
	}
	path := filepath.Join(filepath.Dir(self), serverBinary)
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("this command is in %s, which is not beside airlock (%s is missing); build both into one directory with 'CGO_ENABLED=0 go build -o DIR/ ./cmd/...' from airlock's source, or copy %s next to %s", serverBinary, path, serverBinary, self)
	case err != nil:
		return "", fmt.Errorf("this command is in %s: %w", serverBinary, err)
	case st.IsDir() || st.Mode().Perm()&0o111 == 0:
		return "", fmt.Errorf("this command is in %s, but %s is not an executable file; rebuild it with 'CGO_ENABLED=0 go build -o DIR/ ./cmd/...'", serverBinary, path)
	}
	return path, nil
}
