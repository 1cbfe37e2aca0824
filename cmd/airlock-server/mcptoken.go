package main

import (
	"fmt"
	"io"
	"net/http"

	airlockmcp "github.com/airlockhq/airlock/integrations/mcp"
	"github.com/airlockhq/airlock/internal/cli"
)

// withToken puts h behind the bearer token of the file at path (the
// default one when path is empty), making the token when the file does not
// exist. It returns the handler, the file and a note for the person when
// the token is new, or an exit code >= 0.
func withToken(path string, h http.Handler, stderr io.Writer) (_ http.Handler, _, note string, code int) {
	if path == "" {
		path = airlockmcp.DefaultTokenPath()
	}
	if path == "" {
		fmt.Fprintln(stderr, "airlock mcp serve: no place for the bearer token (no home directory); name one with --token-file FILE")
		return nil, "", "", cli.ExitUsage
	}
	token, created, err := airlockmcp.LoadOrCreateToken(path)
	if err != nil {
		fmt.Fprintln(stderr, "airlock mcp serve: --token-file:", err)
		return nil, "", "", 1
	}
	if created {
		note = fmt.Sprintf("airlock mcp serve: made a new bearer token in %s (mode 0600)\n", path)
	}
	return airlockmcp.RequireToken(token, h), path, note, -1
}
