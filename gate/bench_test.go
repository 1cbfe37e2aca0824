package gate

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/shell"
)

// benchRules builds n rules spread evenly over the four layers: exact and
// prefix Bash rules over many command names, path rules over many
// directories, network and MCP rules, with a deny and an ask for every
// tenth name. Among them are the allow rules the benchmark command needs.
func benchRules(b *testing.B, base rules.Base, n int) *rules.Set {
	b.Helper()
	layers := rules.Layers()
	var rs []*rules.Rule
	add := func(effect rules.Effect, match string) {
		r, err := rules.NewRule(effect, match, layers[len(rs)%len(layers)], base)
		if err != nil {
			b.Fatal(err)
		}
		rs = append(rs, r)
	}
	add(rules.Allow, "Bash(cd:*)")
	add(rules.Allow, "Bash(git log:*)")
	add(rules.Allow, "Bash(head *)")
	add(rules.Deny, "Bash(git push --force *)")
	add(rules.Ask, "Bash(git push:*)")
	add(rules.Deny, "Read(./.env)")
	for i := 0; len(rs) < n; i++ {
		name := fmt.Sprintf("tool%d", i)
		switch i % 10 {
		case 0, 1, 2:
			add(rules.Allow, fmt.Sprintf("Bash(%s build --target %d)", name, i))
		case 3, 4:
			add(rules.Allow, fmt.Sprintf("Bash(%s run:*)", name))
		case 5:
			add(rules.Deny, fmt.Sprintf("Bash(%s rm -rf *)", name))
		case 6:
			add(rules.Ask, fmt.Sprintf("Bash(git %s *)", name))
		case 7:
			add(rules.Allow, fmt.Sprintf("Read(./pkg%d/**)", i))
		case 8:
			add(rules.Deny, fmt.Sprintf("Edit(//srv/data%d/**)", i))
		case 9:
			if i%20 == 9 {
				add(rules.Allow, fmt.Sprintf("Net(api%d.example.com:443)", i))
			} else {
				add(rules.Allow, fmt.Sprintf("mcp__server%d__tool", i))
			}
		}
	}
	return rules.NewSet(rs)
}

// BenchmarkDecide3SegmentBash10kRules measures one decision, parsing
// included, for a three-command Bash input against 10,000 rules spread
// over the four layers. It reports the median and the 99th percentile of
// single decisions.
func BenchmarkDecide3SegmentBash10kRules(b *testing.B) {
	dirs := newTestDirs(b)
	set := benchRules(b, dirs.base(), 10000)
	if set.Len() != 10000 {
		b.Fatalf("%d rules", set.Len())
	}
	e := &Evaluator{Profile: dirs.profile(b, nil), Rules: set}
	call := dirs.bash("cd sub && git log --oneline -n 20 | head -5")
	ctx := context.Background()
	if d, err := e.Decide(ctx, call); err != nil || d.Effect != rules.Allow || len(d.Requirements) != 2 { // cd is no command of its own
		b.Fatalf("%+v %v", d, err)
	}
	durations := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		e.Decide(ctx, call)
		durations = append(durations, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(durations, func(i, j int) bool { return durations[i] < durations[j] })
	b.ReportMetric(float64(durations[len(durations)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(durations[len(durations)*99/100].Nanoseconds())/1e3, "p99-µs")
}

// BenchmarkBashRequirements is the parsing part alone.
func BenchmarkBashRequirements(b *testing.B) {
	dirs := newTestDirs(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		shell.Requirements("cd sub && git log --oneline -n 20 | head -5", dirs.ws, dirs.home)
	}
}

// BenchmarkDecideByInput: one decision of a Bash call by the shape of
// its input: nesting depth ("echo $(" N times) and size (N three-command
// segments), with 10,000 rules. Past the shell package's bounds the input
// is refused without being walked; below them time and memory grow
// linearly (docs/BENCHMARKS.md, Gate decisions by input).
func BenchmarkDecideByInput(b *testing.B) {
	dirs := newTestDirs(b)
	e := &Evaluator{Profile: dirs.profile(b, nil), Rules: benchRules(b, dirs.base(), 10000)}
	ctx := context.Background()
	inputs := []struct{ name, src string }{}
	for _, n := range []int{1, 10, 90, 1000, 30000} {
		src := strings.Repeat("echo $(", n) + "x" + strings.Repeat(")", n)
		inputs = append(inputs, struct{ name, src string }{fmt.Sprintf("depth=%d/bytes=%d", n, len(src)), src})
	}
	for _, n := range []int{1, 10, 100, 1000, 5000} {
		src := strings.Repeat("cd sub && git log --oneline -n 20 | head -5; ", n)
		inputs = append(inputs, struct{ name, src string }{fmt.Sprintf("segments=%d/bytes=%d", n, len(src)), src})
	}
	for _, in := range inputs {
		call := dirs.bash(in.src)
		b.Run(in.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				e.Decide(ctx, call)
			}
		})
	}
}
