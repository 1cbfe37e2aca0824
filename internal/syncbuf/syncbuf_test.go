package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// Writers and readers at once keep every byte (run with -race to see the
// lock matter).
func TestConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				b.Write([]byte("ab"))
				b.WriteString("c")
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	s := b.String()
	if len(s) != 8*100*3 || strings.Count(s, "c") != 800 {
		t.Errorf("got %d bytes, %d c's; want 2400 and 800", len(s), strings.Count(s, "c"))
	}
}
