// Command airlock-sandbox is the sandbox's helper binary: airlock execs
// it inside each run's fresh namespaces as the stage-2 helper and as the
// guard proxy, two starts per run. It holds only those entry points
// (package sandbox/helper), about 2.5 MB against airlock's 9.7, so each
// start pays fewer page faults and package inits; airlock falls back to
// re-executing itself when it finds no airlock-sandbox of its own build
// beside it (docs/ARCHITECTURE.md, "The binaries").
package main

import "github.com/airlockhq/airlock/sandbox/helper"

func main() {
	helper.Main()
}
