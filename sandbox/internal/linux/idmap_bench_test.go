package linux

import (
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkRootlessUserns compares the ways of holding the id mapping's
// namespace, in a process with a few megabytes of heap written, as the
// supervisor has by then (a fork copies their page tables). cpu-µs/op is
// the CPU of this process and its reaped children (docs/BENCHMARKS.md):
//
//	sudo go test -run NONE -bench RootlessUserns -benchtime 300x ./sandbox/internal/linux
func BenchmarkRootlessUserns(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("the id mapping is made by root")
	}
	heap := make([]byte, 8<<20)
	for i := range heap {
		heap[i] = byte(i)
	}
	for _, tc := range []struct {
		name string
		make func() (int, error)
	}{
		{"small holder", smallHolderUserns},
		{"traced", func() (int, error) { return rootlessUserns(true) }},
		{"holder", func() (int, error) { return rootlessUserns(false) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			begin := treeCPU()
			for i := 0; i < b.N; i++ {
				fd, err := tc.make()
				if err != nil {
					b.Skip(err)
				}
				unix.Close(fd)
				heap[(i*4096)%len(heap)]++ // the supervisor keeps writing its heap
			}
			b.ReportMetric(float64(treeCPU()-begin)/float64(b.N)/1e3, "cpu-µs/op")
		})
	}
}

// treeCPU is the user and system time of this process and its reaped
// children.
func treeCPU() time.Duration {
	var self, children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	return time.Duration(self.Utime.Nano() + self.Stime.Nano() + children.Utime.Nano() + children.Stime.Nano())
}
