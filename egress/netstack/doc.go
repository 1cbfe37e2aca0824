// Package netstack is the egress gateway built on gVisor's userspace
// TCP/IP stack: Serve runs one on a sandbox's TAP device, in this
// process, deciding every connection, DNS query and datagram with an
// egress.Policy (package egress describes what it allows and refuses).
//
// Importing the package registers Serve as egress.InProcess, which
// package sandbox uses when its caller names no other egress.Server:
// airlock-server and the Go API get the gateway in process this way. The
// package is gVisor's only importer in the module, so a binary that does
// not import it (airlock, whose runs start the gateway in the
// airlock-gateway executable, through egress/remote) carries none of the
// netstack's size and package inits.
//
// It owns the stack, the DNS server, the UDP relay and the ICMP filter;
// the policy, the link's addresses and the Denial type are egress's.
package netstack

import (
	"os"

	"github.com/airlockhq/airlock/egress"
)

func init() { egress.Register(server{}) }

// server is the in-process egress.Server.
type server struct{}

func (server) Serve(tap *os.File, cfg egress.Config) (egress.Gateway, error) {
	g, err := Serve(tap, cfg)
	if err != nil {
		return nil, err
	}
	return g, nil
}
