package grant

import (
	"sync"
	"time"
)

// Ledger records which tokens have been spent. It is keyed on the token's
// MAC, which is unique per token because every token carries a random nonce.
type Ledger interface {
	// Spend records mac as used; it returns ErrReplayed if it was already
	// spent. expires is the token's expiry: a ledger may forget mac after
	// it, since Redeem rejects an expired token before it calls Spend.
	// Spend must be atomic: of concurrent calls with one mac, exactly one
	// may succeed.
	Spend(mac [32]byte, expires time.Time) error
}

// MemoryLedger is a Ledger for one process. It is safe for concurrent use
// and drops entries once they have expired.
type MemoryLedger struct {
	mu      sync.Mutex
	spent   map[[32]byte]ledgerEntry
	sweepAt int
}

// ledgerEntry keeps both readings of a token's expiry. An entry is dropped
// only when both the wall clock and the monotonic clock say it has expired,
// so a wall clock that jumps forward cannot make the ledger forget a token
// that Redeem would still accept by its monotonic deadline.
type ledgerEntry struct {
	wall time.Time // the token's expiry, wall clock only
	mono time.Time // the same instant, as a deadline with a monotonic reading
}

// minSweep is the map size below which expired entries are left alone.
const minSweep = 64

// NewMemoryLedger returns an empty MemoryLedger.
func NewMemoryLedger() *MemoryLedger {
	return &MemoryLedger{spent: make(map[[32]byte]ledgerEntry), sweepAt: minSweep}
}

// Spend implements [Ledger].
func (l *MemoryLedger) Spend(mac [32]byte, expires time.Time) error {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.spent[mac]; ok {
		return ErrReplayed
	}
	l.spent[mac] = ledgerEntry{wall: expires.Round(0), mono: now.Add(expires.Sub(now))}
	// Sweep when the map has doubled since the last sweep, so the cost of
	// forgetting is spread over the calls that made it grow.
	if len(l.spent) >= l.sweepAt {
		for m, e := range l.spent {
			if e.expired(now) {
				delete(l.spent, m)
			}
		}
		l.sweepAt = max(minSweep, 2*len(l.spent))
	}
	return nil
}

// Len returns the number of tokens the ledger remembers.
func (l *MemoryLedger) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.spent)
}

func (e ledgerEntry) expired(now time.Time) bool {
	return now.After(e.mono) && now.Round(0).After(e.wall)
}
