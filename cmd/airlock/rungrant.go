package main

import (
	"errors"
	"strings"

	"github.com/airlockhq/airlock/grant"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
	"github.com/airlockhq/airlock/tool"
)

// newRunExecutor returns the Executor for airlock run: with --grant, one
// that redeems the gate's grant before anything runs, with the key and
// ledger the hook that issued it used (grant.DefaultDir, shared through
// $AIRLOCK_GRANT_DIR). opts carry the rest (the egress gateway).
func newRunExecutor(p *profile.Profile, token, execID string, opts sandbox.Options) (*sandbox.Executor, error) {
	if token == "" {
		return sandbox.NewWithOptions(p, opts)
	}
	if execID == "" {
		return nil, errors.New("--grant needs the --execution-id it was issued for")
	}
	iss, err := grant.OpenDir(grant.DefaultDir())
	if err != nil {
		return nil, err
	}
	opts.Grants = iss
	return sandbox.NewWithOptions(p, opts)
}

// grantClaims is the claim --grant makes: the command.execute of the whole
// command, which is what the hook binds (for "bash -c SCRIPT", the script).
func grantClaims(token string, argv []string) []grant.Claim {
	if token == "" {
		return nil
	}
	target := strings.Join(argv, " ")
	if len(argv) == 3 && argv[1] == "-c" {
		target = argv[2]
	}
	return []grant.Claim{{Kind: tool.KindCommandExecute, Target: target, Token: grant.Token(token)}}
}
