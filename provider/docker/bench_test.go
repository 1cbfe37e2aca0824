package docker_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/airlockhq/airlock/provider"
)

// BenchmarkWarmSession is one `echo 1` in a session scope whose
// container already runs: exec, output, exit status and the sweep of
// leftover processes. bench/providers.sh sets it beside `docker exec`.
func BenchmarkWarmSession(b *testing.B) {
	benchExec(b, "session")
}

// BenchmarkColdExecution is one `echo 1` in a fresh container, created,
// started and removed, measured in-process (no CLI start).
func BenchmarkColdExecution(b *testing.B) {
	benchExec(b, "execution")
}

func benchExec(b *testing.B, scope string) {
	img := benchImage(b)
	c, err := provider.ParseCatalog("b.toml", []byte(fmt.Sprintf(
		"[sandbox.box]\nprovider = \"docker\"\nimage = %q\nscope = %q\n", img, scope)), dockerDriver())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	h, err := c.Operator(provider.Identity{User: "u", Session: "s"}).Sandbox("box")
	if err != nil {
		b.Fatal(err)
	}
	req := provider.Request{Argv: []string{"echo", "1"}}
	if res, err := h.Execute(context.Background(), req); err != nil || res.Stdout != "1\n" {
		b.Fatalf("%v %+v", err, res)
	}
	for b.Loop() {
		if res, err := h.Execute(context.Background(), req); err != nil || res.Status != provider.StatusSucceeded {
			b.Fatalf("%v %+v", err, res)
		}
	}
}
