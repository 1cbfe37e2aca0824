package provider_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/provider"
	"github.com/airlockhq/airlock/provider/providertest"
)

func TestLocalConformance(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	providertest.Run(t, providertest.Target{
		Driver: provider.LocalDriver(),
		Leftovers: func(t *testing.T) []string {
			entries, _ := os.ReadDir(tmp)
			var left []string
			// A process whose working directory is one of our scratch
			// workspaces outlived its run.
			procs, _ := os.ReadDir("/proc")
			for _, p := range procs {
				if cwd, err := os.Readlink("/proc/" + p.Name() + "/cwd"); err == nil && strings.HasPrefix(cwd, tmp+"/airlock-") {
					left = append(left, "process "+p.Name()+" in "+cwd)
				}
			}
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), "airlock-") {
					left = append(left, e.Name())
				}
			}
			return left
		},
	})
}

// BenchmarkLocalExecution is one `echo 1` through the local provider in
// a fresh scratch workspace, in-process; bench/providers.sh sets it
// beside the docker provider's.
func BenchmarkLocalExecution(b *testing.B) {
	c, err := provider.ParseCatalog("b.toml", []byte("[sandbox.box]\nprovider = \"local\"\n"), provider.LocalDriver())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	h, err := c.Operator(provider.Identity{}).Sandbox("box")
	if err != nil {
		b.Fatal(err)
	}
	req := provider.Request{Argv: []string{"echo", "1"}}
	for b.Loop() {
		if res, err := h.Execute(context.Background(), req); err != nil || res.Stdout != "1\n" {
			b.Fatalf("%v %+v", err, res)
		}
	}
}
