package gate

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cedar-policy/cedar-go"
)

// cedarEquivalent writes the benchmark's rule set as Cedar policies: exact
// commands as ==, command prefixes and path trees as like "...*", with the
// same 10,000-rule count and the same mix of permit and forbid. Cedar has
// no ask, so ask rules become forbid (the strictest reading).
func cedarEquivalent(n int) string {
	var b strings.Builder
	count := 0
	policy := func(effect, cond string) {
		fmt.Fprintf(&b, "%s (principal, action, resource) when { %s };\n", effect, cond)
		count++
	}
	policy("permit", `context.kind == "exec" && context.target like "cd *"`)
	policy("permit", `context.kind == "exec" && context.target like "git log*"`)
	policy("permit", `context.kind == "exec" && context.target like "head *"`)
	policy("forbid", `context.kind == "exec" && context.target like "git push --force *"`)
	policy("forbid", `context.kind == "exec" && context.target like "git push*"`)
	policy("forbid", `context.kind == "read" && context.target == "/ws/.env"`)
	for i := 0; count < n; i++ {
		name := fmt.Sprintf("tool%d", i)
		switch i % 10 {
		case 0, 1, 2:
			policy("permit", fmt.Sprintf(`context.kind == "exec" && context.target == "%s build --target %d"`, name, i))
		case 3, 4:
			policy("permit", fmt.Sprintf(`context.kind == "exec" && context.target like "%s run*"`, name))
		case 5:
			policy("forbid", fmt.Sprintf(`context.kind == "exec" && context.target like "%s rm -rf *"`, name))
		case 6:
			policy("forbid", fmt.Sprintf(`context.kind == "exec" && context.target like "git %s *"`, name))
		case 7:
			policy("permit", fmt.Sprintf(`context.kind == "read" && context.target like "/ws/pkg%d/*"`, i))
		case 8:
			policy("forbid", fmt.Sprintf(`context.kind == "write" && context.target like "/srv/data%d/*"`, i))
		case 9:
			policy("permit", fmt.Sprintf(`context.kind == "net" && context.target == "api%d.example.com:443"`, i))
		}
	}
	return b.String()
}

// BenchmarkCedarEquivalent10kRules decides the same three commands as
// BenchmarkDecide3SegmentBash10kRules with cedar-go, already split into
// three requests (no shell parsing: a head start for Cedar). Run both in
// one invocation and compare p50: go test -bench '10kRules' ./gate
func BenchmarkCedarEquivalent10kRules(b *testing.B) {
	ps, err := cedar.NewPolicySetFromBytes("bench.cedar", []byte(cedarEquivalent(10000)))
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for range ps.All() {
		n++
	}
	if n != 10000 {
		b.Fatalf("%d policies", n)
	}
	reqs := make([]cedar.Request, 0, 3)
	for _, target := range []string{"cd sub", "git log --oneline -n 20", "head -5"} {
		reqs = append(reqs, cedar.Request{
			Principal: cedar.NewEntityUID("Agent", "a"),
			Action:    cedar.NewEntityUID("Action", "use"),
			Resource:  cedar.NewEntityUID("Requirement", "r"),
			Context:   cedar.NewRecord(cedar.RecordMap{"kind": cedar.String("exec"), "target": cedar.String(target)}),
		})
	}
	for _, r := range reqs {
		if d, _ := cedar.Authorize(ps, cedar.EntityMap{}, r); d != cedar.Allow {
			b.Fatalf("cedar denies %v", r.Context)
		}
	}
	durations := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		for _, r := range reqs {
			cedar.Authorize(ps, cedar.EntityMap{}, r)
		}
		durations = append(durations, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(durations, func(i, j int) bool { return durations[i] < durations[j] })
	b.ReportMetric(float64(durations[len(durations)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(durations[len(durations)*99/100].Nanoseconds())/1e3, "p99-µs")
}
