package shell

import (
	"fmt"
	"strings"
	"testing"
)

// nest is n command substitutions inside each other: "$($(...x...))".
func nest(n int) string {
	return strings.Repeat("echo $(", n) + "x" + strings.Repeat(")", n)
}

// flat is n simple commands in a list: "git status; git status; ...".
func flat(n int) string {
	return strings.Repeat("git log --oneline -n 5 | head -3 && cat README.md; ", n)
}

// BenchmarkRequirementsDepth: decision input by nesting depth. Past
// maxNesting the script is refused before it is walked.
func BenchmarkRequirementsDepth(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10000, 30000} {
		src := nest(n)
		b.Run(fmt.Sprintf("depth=%d/bytes=%d", n, len(src)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Requirements(src, "/ws", "/home/u")
			}
		})
	}
}

// BenchmarkRequirementsSize: decision input by size, at depth 1.
func BenchmarkRequirementsSize(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10000} {
		src := flat(n)
		b.Run(fmt.Sprintf("commands=%d/bytes=%d", n, len(src)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Requirements(src, "/ws", "/home/u")
			}
		})
	}
}
