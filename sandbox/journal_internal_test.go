package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestJournalConcurrentStarts: starts in one state directory, each
// writing its run's journal while others look for interrupted runs'
// (FinishInterruptedRuns), as 32 `airlock run`s at a time do. A journal
// read before it was written failed the reading start ("unexpected end
// of JSON input", exit 125). Now none fails, and every journal of a run
// still going is left for its run.
func TestJournalConcurrentStarts(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("TMPDIR", t.TempDir())
	ws := t.TempDir()
	dir, err := pickJournalDir(nil)
	if err != nil {
		t.Fatal(err)
	}
	if dir != filepath.Join(state, "airlock", "runs") {
		t.Fatalf("journal dir %s, not under XDG_STATE_HOME", dir)
	}
	const starts, atOnce = 160, 32
	var wg sync.WaitGroup
	errs := make(chan error, starts)
	slots := make(chan struct{}, atOnce)
	held := make([]*runJournal, starts)
	for i := range starts {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			if _, err := FinishInterruptedRuns(); err != nil {
				errs <- fmt.Errorf("start %d: %w", i, err)
			}
			j := &runJournal{RunID: fmt.Sprintf("run%03d", i), Workspace: ws, Roots: []rootState{}}
			if err := j.create(dir); err != nil {
				errs <- fmt.Errorf("start %d: %w", i, err)
				return
			}
			held[i] = j
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != starts {
		t.Errorf("%d journals in %s, want one per run still going (%d)", len(entries), dir, starts)
	}
	for _, j := range held {
		if j != nil {
			j.finish()
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("journals left after every run finished: %v", entries)
	}
}
