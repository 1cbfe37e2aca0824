package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/airlockhq/airlock/internal/binaries"
)

// handOff is the entry of a command that another binary holds
// (internal/binaries: mcp, exec and serve are airlock-server's): it
// replaces this process with that binary running the same command line,
// so the caller (an agent's MCP configuration, a service unit) sees one
// process whose pid, stdio and exit status are the command's. It returns
// only when the exec fails.
func handOff(name string) func(args []string, stdout, stderr io.Writer) int {
	return func(args []string, _, stderr io.Writer) int {
		holder, ok := binaries.Holder(name)
		if !ok || holder.Name == binaries.Airlock {
			// Not reached: subcommands hands off only what another
			// binary holds (TestSubcommandsAsListed).
			fmt.Fprintf(stderr, "airlock %s: no other binary holds this command\n", name)
			return exitUsage
		}
		path, err := binaryPath(holder.Name, "this command is in "+holder.Name)
		if err == nil {
			err = syscall.Exec(path, append([]string{path, name}, args...), os.Environ())
		}
		fmt.Fprintf(stderr, "airlock %s: %v\n", name, err)
		return exitUsage
	}
}

// binaryPath is the binary named name beside the running airlock (its
// real path: a symlink to airlock finds it beside the target), or an
// error that says how to get it there; need starts the error's sentence
// ("this command is in airlock-server").
func binaryPath(name, need string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot find airlock's own executable to look for %s beside it: %w", name, err)
	}
	path := filepath.Join(filepath.Dir(self), name)
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%s, which is not beside airlock (%s is missing); build them into one directory with 'CGO_ENABLED=0 go build -o DIR/ ./cmd/...' from airlock's source, or copy %s next to %s", need, path, name, self)
	case err != nil:
		return "", fmt.Errorf("%s: %w", need, err)
	case st.IsDir() || st.Mode().Perm()&0o111 == 0:
		return "", fmt.Errorf("%s, but %s is not an executable file; rebuild it with 'CGO_ENABLED=0 go build -o DIR/ ./cmd/...'", need, path)
	}
	return path, nil
}
