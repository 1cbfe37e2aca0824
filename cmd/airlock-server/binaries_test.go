package main

import (
	"slices"
	"testing"

	"github.com/airlockhq/airlock/internal/binaries"
)

// TestCommandsAsListed: this binary runs exactly the commands
// internal/binaries gives it, the ones airlock hands over.
func TestCommandsAsListed(t *testing.T) {
	b, ok := binaries.Of(binaries.Server)
	if !ok {
		t.Fatalf("internal/binaries has no %s", binaries.Server)
	}
	var got []string
	for c := range commands() {
		got = append(got, c)
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(b.Commands))
	if !slices.Equal(got, want) {
		t.Errorf("airlock-server runs %q; internal/binaries lists %q", got, want)
	}
}
