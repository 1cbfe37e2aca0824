package server

import (
	"runtime"
	"strings"
	"testing"
)

// TestDecideBoundedCost: what one /v1/decide may cost the daemon is
// bounded. A Bash command just under the body cap and a deep nest are
// refused with the shell analysis' reason, not analysed, and the
// daemon's heap is not left holding what the analysis allocated (issue
// 20: one 3.9 MiB request used to grow the daemon by 600-800 MB).
func TestDecideBoundedCost(t *testing.T) {
	r := newRig(t)
	for _, tt := range []struct{ name, cmd, reason string }{
		{"3.9 MiB", strings.Repeat("echo $(", 500000), "bytes, more than"},
		{"deep nest", strings.Repeat("$(", 30000) + strings.Repeat(")", 30000), "nests more than airlock analyses"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			d := r.decide(r.bash(tt.cmd))
			runtime.GC()
			runtime.ReadMemStats(&after)
			if d.Decision != "deny" || !strings.Contains(d.Reason, tt.reason) {
				t.Fatalf("decision %s (%s), want deny saying %q", d.Decision, d.Reason, tt.reason)
			}
			if len(d.Reason) > 1000 {
				t.Errorf("the reason carries %d bytes", len(d.Reason))
			}
			if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 64<<20 {
				t.Errorf("the heap grew by %d bytes after one decision", grown)
			}
		})
	}
}
