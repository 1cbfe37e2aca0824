package sandbox_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// BenchmarkExecutorStartToExit is the library's side of the startup
// benchmark (bench/startup.sh times the CLI): Prepare, Start and Wait of
// /bin/true under the full workspace preset, through one Executor. The
// test binary is its own stage-2 helper, as any program using the package
// is. setup-ns/op is Result.Timings.Setup: Start called → command exec'd.
//
//	go test -run '^$' -bench ExecutorStartToExit -benchtime 300x ./sandbox/
func BenchmarkExecutorStartToExit(b *testing.B) {
	s := profile.Preset(profile.DefaultPreset)
	s.Workspace = b.TempDir()
	p, err := profile.New(s)
	if err != nil {
		b.Fatal(err)
	}
	ex, err := sandbox.New(p)
	if errors.Is(err, sandbox.ErrUnavailable) {
		b.Skip(err)
	}
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	cmd := sandbox.Cmd{Args: []string{"/bin/true"}}
	var setup time.Duration
	for b.Loop() {
		proc, err := ex.Prepare(ctx, cmd)
		if err != nil {
			b.Fatal(err)
		}
		if err := proc.Start(); err != nil {
			b.Fatal(err)
		}
		res, err := proc.Wait()
		if err != nil {
			b.Fatal(err)
		}
		if res.Status != sandbox.StatusSucceeded {
			b.Fatalf("status %s, exit %d, stderr %q", res.Status, res.ExitCode, res.Stderr)
		}
		setup += res.Timings.Setup
	}
	b.ReportMetric(float64(setup.Nanoseconds())/float64(b.N), "setup-ns/op")
}
