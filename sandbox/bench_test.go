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
// "warm" is an Executor with Options.KeepWarm, whose runs after the
// first take a helper cloned while the run before ran; "cold" clones each
// run's helper in its Start.
//
//	go test -run '^$' -bench ExecutorStartToExit -benchtime 300x ./sandbox/
func BenchmarkExecutorStartToExit(b *testing.B) {
	for _, keepWarm := range []bool{false, true} {
		name := map[bool]string{false: "cold", true: "warm"}[keepWarm]
		b.Run(name, func(b *testing.B) { benchmarkStartToExit(b, keepWarm) })
	}
}

func benchmarkStartToExit(b *testing.B, keepWarm bool) {
	s := profile.Preset(profile.DefaultPreset)
	s.Workspace = b.TempDir()
	p, err := profile.New(s)
	if err != nil {
		b.Fatal(err)
	}
	ex, err := sandbox.NewWithOptions(p, sandbox.Options{KeepWarm: keepWarm})
	if errors.Is(err, sandbox.ErrUnavailable) {
		b.Skip(err)
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ex.Close() })
	if !keepWarm {
		// The helper New warms is for the first run only; Close ends it,
		// and every run clones its own.
		ex.Close()
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
