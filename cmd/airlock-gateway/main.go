// Command airlock-gateway is the egress gateway of one airlock run, in a
// process of its own: airlock run starts it, beside itself, for a
// sandbox with a network, and hands it the sandbox's TAP device over the
// control socket on descriptor 3 (egress/remote). It serves the device
// with gVisor's netstack (egress/netstack) under the run's allowlist
// until the run ends, and exits when airlock closes the socket or dies.
//
// It is its own executable so that airlock, which starts for every tool
// call, does not link the netstack (internal/binaries). It takes no
// arguments and is not meant to be run by hand.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/airlockhq/airlock/egress"
	_ "github.com/airlockhq/airlock/egress/netstack" // registers the in-process gateway egress.InProcess returns
	"github.com/airlockhq/airlock/egress/remote"
)

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "airlock-gateway: started by airlock run for a sandbox with a network; it takes no arguments")
		os.Exit(2)
	}
	// The terminal's signals are airlock's to handle; the run ends this
	// process by closing the control socket.
	signal.Ignore(syscall.SIGINT, syscall.SIGQUIT, syscall.SIGHUP, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU)
	if err := remote.ServeControl(os.NewFile(3, "control"), egress.Config{}, egress.InProcess()); err != nil {
		fmt.Fprintln(os.Stderr, "airlock-gateway:", err)
		os.Exit(1)
	}
}
