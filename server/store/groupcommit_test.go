package store

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// Every write is committed exactly once and its writer hears the outcome
// of the batch that carried it; a failed commit fails each of its writers.
func TestGroupCommit(t *testing.T) {
	var mu sync.Mutex
	seen := map[int]int{}
	fail := errors.New("disk full")
	g := NewGroupCommit(8, func(b []int) error {
		mu.Lock()
		defer mu.Unlock()
		for _, v := range b {
			seen[v]++
		}
		for _, v := range b {
			if v%10 == 7 {
				return fail
			}
		}
		return nil
	})
	const n = 200
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = g.Add(context.Background(), i)
		}()
	}
	wg.Wait()
	g.Close()
	for i := range n {
		if seen[i] != 1 {
			t.Errorf("write %d committed %d times, want 1", i, seen[i])
		}
		if i%10 == 7 && !errors.Is(errs[i], fail) {
			t.Errorf("write %d was in a failed batch but got %v", i, errs[i])
		}
	}
	if err := g.Add(context.Background(), 1); !errors.Is(err, ErrClosed) {
		t.Errorf("Add after Close: %v, want ErrClosed", err)
	}
}
