// Package helper is the whole of the airlock-sandbox binary: the entry
// points of the sandbox's helper processes (the stage-2 helper and the
// guard proxy) and nothing else, so that each of their starts, two per
// run, maps and initialises a program a quarter of airlock's size.
//
// The helpers themselves live in sandbox/internal/linux, whose init runs
// them when argv[0] names one; importing this package links that init.
// What this package does not do: find the binary or decide whether a run
// uses it (sandbox.Executor does, see helperbin.go there).
package helper

import (
	"fmt"
	"os"

	"github.com/airlockhq/airlock/sandbox/internal/linux"
)

// Main is the program's main when argv[0] names no helper: someone ran
// the binary by hand. The helpers never return here.
func Main() {
	fmt.Fprintf(os.Stderr, "airlock-sandbox holds the sandbox's helper processes (%s, %s); airlock starts it, it is not a command to run by hand\n", linux.Stage2Arg0, linux.GuardProxyArg0)
	os.Exit(2)
}
