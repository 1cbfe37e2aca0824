package proctime

import (
	"testing"
	"time"
)

func TestField(t *testing.T) {
	for _, tc := range []struct {
		in   string
		i    int
		want int64
	}{
		{"0 70145 1\n", 1, 70145},
		{"123 456 7\n", 0, 123},
		{"123 456 7", 2, 7},
		{"123 456 7\n", 3, 0},
		{"12x 456\n", 1, 0},
		{"", 0, 0},
	} {
		if got := field([]byte(tc.in), tc.i); got != tc.want {
			t.Errorf("field(%q, %d) = %d, want %d", tc.in, tc.i, got, tc.want)
		}
	}
}

// The test binary, like airlock, spends CPU before this package's init
// (the runtime's start): the estimate must see some of it, and the start
// it gives must lie before the init and not before the test's parent
// could have forked it.
func TestStartPrecedesInit(t *testing.T) {
	if BeforeInit() <= 0 {
		t.Fatalf("BeforeInit = %v: the thread's CPU time was not read", BeforeInit())
	}
	if BeforeInit() > time.Minute {
		t.Fatalf("BeforeInit = %v: not a start-up", BeforeInit())
	}
	if !Start().Before(atInit) {
		t.Fatalf("Start %v is not before the package init %v", Start(), atInit)
	}
	if Since() < time.Since(atInit) {
		t.Fatalf("Since %v is shorter than the time since init %v", Since(), time.Since(atInit))
	}
}
