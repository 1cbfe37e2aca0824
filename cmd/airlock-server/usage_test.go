package main

import (
	"strings"
	"testing"
)

// TestServerCommandUsageErrors is cmd/airlock's TestEveryCommandUsageErrors
// for the commands this binary holds: a usage error is one line on stderr
// naming what to write, nothing on stdout, status 125; asked-for help goes
// to stdout, status 0, spelt --flag.
func TestServerCommandUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "name mcp, exec or serve"},
		{[]string{"run"}, "name mcp, exec or serve"},
		{[]string{"mcp"}, "name a command: proxy, serve"},
		{[]string{"mcp", "serve", "--bogus"}, "unknown flag --bogus; run 'airlock mcp serve --help'"},
		{[]string{"mcp", "serve", "x"}, "takes no arguments"},
		{[]string{"mcp", "proxy"}, "no server command given"},
		{[]string{"exec", "--bogus"}, "unknown flag --bogus"},
		{[]string{"exec", "--timeout", "30"}, "use 30s"},
		{[]string{"exec", "--sandbox", "x"}, "give either --code CODE or -- ARGV"},
		{[]string{"serve", "--bogus"}, "unknown flag --bogus"},
	} {
		var so, se strings.Builder
		code := dispatch(tc.args, &so, &se)
		if code != 125 || !strings.Contains(se.String(), tc.want) || strings.Count(se.String(), "\n") != 1 || so.Len() != 0 {
			t.Errorf("airlock-server %q: exit %d, stdout %q, stderr %q; want 125 and one line with %q", tc.args, code, so.String(), se.String(), tc.want)
		}
	}
	for _, args := range [][]string{
		{"mcp", "--help"}, {"mcp", "serve", "--help"}, {"mcp", "proxy", "--help"}, {"exec", "--help"}, {"help", "exec"}, {"serve", "--help"},
	} {
		var so, se strings.Builder
		code := dispatch(args, &so, &se)
		if code != 0 || se.Len() != 0 || !strings.Contains(so.String(), "Usage: airlock") {
			t.Errorf("airlock-server %q: exit %d, stderr %q, stdout %.80q; want the help on stdout", args, code, se.String(), so.String())
		}
		if strings.Contains(so.String(), "\n  -") && !strings.Contains(so.String(), "\n  --") {
			t.Errorf("airlock-server %q: help spells flags with one dash:\n%s", args, so.String())
		}
	}
	var so, se strings.Builder
	if code := dispatch([]string{"--version"}, &so, &se); code != 0 || !strings.HasPrefix(so.String(), "airlock ") {
		t.Errorf("airlock-server --version: exit %d, stdout %q", code, so.String())
	}
}
