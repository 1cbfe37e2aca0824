package store

import (
	"context"
	"errors"
	"sync"
)

// ErrClosed is what a write to a closed store returns.
var ErrClosed = errors.New("the store is closed")

// GroupCommit batches concurrent writes into one transaction: one
// goroutine takes every write waiting, commits them together and tells
// each writer the outcome. While it waits for a commit the next batch
// gathers, so under load each commit (an fsync, or a round trip and a WAL
// flush) carries many writes, and with one writer it costs one channel
// hop. Both stores write their audit log through one.
type GroupCommit[T any] struct {
	commit func([]T) error
	max    int
	in     chan groupItem[T]
	quit   chan struct{}
	done   chan struct{}
	once   sync.Once
}

type groupItem[T any] struct {
	v    T
	done chan error
}

// NewGroupCommit starts a GroupCommit whose batches hold at most max
// writes, each committed by commit (which must write all or none).
func NewGroupCommit[T any](max int, commit func([]T) error) *GroupCommit[T] {
	g := &GroupCommit[T]{commit: commit, max: max, in: make(chan groupItem[T]),
		quit: make(chan struct{}), done: make(chan struct{})}
	go g.loop()
	return g
}

// Add writes v and returns once the transaction that carried it has
// committed (nil) or failed. A ctx done before v is handed over returns
// its error and writes nothing.
func (g *GroupCommit[T]) Add(ctx context.Context, v T) error {
	it := groupItem[T]{v: v, done: make(chan error, 1)}
	select {
	case g.in <- it:
	case <-g.quit:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	// Once handed over, v is committed or refused whatever ctx does: wait
	// for the outcome, so a caller never reports as lost a write that is
	// then made, or as made one that was not.
	return <-it.done
}

// Close stops the loop after the batch in progress; later Adds return
// ErrClosed.
func (g *GroupCommit[T]) Close() {
	g.once.Do(func() { close(g.quit) })
	<-g.done
}

func (g *GroupCommit[T]) loop() {
	defer close(g.done)
	for {
		var batch []groupItem[T]
		select {
		case it := <-g.in:
			batch = append(batch, it)
		case <-g.quit:
			return
		}
	gather:
		for len(batch) < g.max {
			select {
			case it := <-g.in:
				batch = append(batch, it)
			default:
				break gather
			}
		}
		vs := make([]T, len(batch))
		for i, it := range batch {
			vs[i] = it.v
		}
		err := g.commit(vs)
		for _, it := range batch {
			it.done <- err
		}
	}
}
