package shell

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestBoundedCost: inputs built to make the analysis grow faster than
// their size are refused with a reason, or analysed within memory linear
// in their size. (Memory, not time: no timed assertions here; the
// benchmarks in gate/bench_test.go time them.)
func TestBoundedCost(t *testing.T) {
	var files strings.Builder
	for i := 0; i < 15000; i++ {
		fmt.Fprintf(&files, "cat f%d;", i)
	}
	tests := []struct {
		name    string
		src     string
		refused string // part of the reason; "" when it is analysed
	}{
		{"30,000-deep $( nest (the issue's 90 KB)", strings.Repeat("$(", 30000) + strings.Repeat(")", 30000), "nests more than airlock analyses"},
		{"deep subshells", strings.Repeat("(", 20000) + "x" + strings.Repeat(")", 20000), "nests more than airlock analyses"},
		{"deep blocks", strings.Repeat("{ ", 20000) + "x" + strings.Repeat("; }", 20000), "nests more than airlock analyses"},
		{"deep ifs", strings.Repeat("if x; then ", 5000) + "y" + strings.Repeat("; fi", 5000), "nests more than airlock analyses"},
		{"over the size bound", strings.Repeat("git status; ", 30000), "bytes, more than"},
		{"brace groups that double", "echo " + strings.Repeat("{a,b}", 30), ""},
		{"15,000 distinct reads (30,000 requirements)", files.String(), "more than airlock allows"},
		{"a 90-deep nest is analysed", strings.Repeat("echo $(", 90) + "x" + strings.Repeat(")", 90), ""},
		{"an ordinary long script is analysed", strings.Repeat("cd sub && git log -n 5 | head -3; ", 2000), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			reqs := Requirements(tt.src, "/ws", "/home/u")
			runtime.ReadMemStats(&after)
			if tt.refused != "" {
				if len(reqs) != 1 || !strings.Contains(reqs[0].Invalid, tt.refused) {
					t.Fatalf("want one refusal saying %q, got %d requirements, first %+v", tt.refused, len(reqs), reqs[0])
				}
				if len(reqs[0].Target) > 200 {
					t.Errorf("the refusal carries %d bytes of the input", len(reqs[0].Target))
				}
			} else if len(reqs) == 0 || reqs[0].Invalid != "" {
				t.Fatalf("analysed input refused: %+v", reqs)
			}
			limit := uint64(200*len(tt.src)) + 32<<20
			if got := after.TotalAlloc - before.TotalAlloc; got > limit {
				t.Errorf("allocated %d bytes for %d bytes of input, over %d", got, len(tt.src), limit)
			}
		})
	}
}
