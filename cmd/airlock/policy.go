package main

import (
	"fmt"
	"io"
)

// runPolicy is a placeholder until the gate lands.
func runPolicy(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "airlock policy: not built yet")
	return 2
}
