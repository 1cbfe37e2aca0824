package main

import (
	"fmt"

	"github.com/airlockhq/airlock/egress"
	"github.com/airlockhq/airlock/egress/remote"
	"github.com/airlockhq/airlock/internal/binaries"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// gatewayOptions names, for a profile with a network, the egress gateway
// airlock's runs use: airlock-gateway, beside airlock, one process per
// run (egress/remote), so that airlock itself links no netstack
// (internal/binaries). A profile without a network needs none; a missing
// airlock-gateway refuses the run, as a missing airlock-server refuses
// its commands. The Server's Close ends a process warmed for a run that
// did not take it.
func gatewayOptions(p *profile.Profile, opts sandbox.Options) (sandbox.Options, *remote.Server, error) {
	if m := p.Spec().Network.Mode; m == "" || m == profile.NetworkModeNone {
		return opts, nil, nil
	}
	if egress.InProcess() != nil {
		// A program that links the netstack serves it in process: this
		// package's tests, which call dispatch (airlock itself links none,
		// internal/binaries).
		return opts, nil, nil
	}
	path, err := binaryPath(binaries.Gateway, fmt.Sprintf("network mode %q needs the egress gateway %s", p.Spec().Network.Mode, binaries.Gateway))
	if err != nil {
		return opts, nil, err
	}
	srv := &remote.Server{Path: path}
	opts.Gateway = srv
	return opts, srv, nil
}
