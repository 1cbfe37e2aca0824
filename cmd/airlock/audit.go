package main

import (
	"fmt"
	"io"
)

// runAudit is a placeholder until the audit log lands.
func runAudit(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "airlock audit: not built yet")
	return 2
}
