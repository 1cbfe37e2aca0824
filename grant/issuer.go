package grant

import (
	"crypto/rand"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// Binding is what one approval authorises.
type Binding struct {
	ExecutionID string    // the execution the approval was for
	Argv        []string  // exact argv, or nil when Command is used
	Command     string    // exact shell command text (for Bash calls), or ""
	Dir         string    // working directory, absolute, cleaned
	Profile     string    // profile fingerprint (hex SHA-256)
	Kind        string    // requirement kind, e.g. "command.execute"
	Target      string    // requirement target, e.g. "git push origin main"
	Expires     time.Time // set by Issue from its TTL
	Nonce       [16]byte  // set by Issue from crypto/rand
}

// The classes of failure. Issue fails with ErrInvalidBinding; Redeem fails
// with exactly one of the others, checked in the order listed. A mismatch
// between the token and what is about to run also comes as a
// *[MismatchError] that names the field.
var (
	ErrInvalidBinding = errors.New("grant: invalid binding")

	ErrMalformed        = errors.New("grant: malformed token")
	ErrTampered         = errors.New("grant: token MAC does not verify (tampered, or issued under another key)")
	ErrExpired          = errors.New("grant: token expired")
	ErrWrongExecution   = errors.New("grant: token is for another execution")
	ErrWrongCommand     = errors.New("grant: token is for another command")
	ErrWrongDir         = errors.New("grant: token is for another working directory")
	ErrWrongProfile     = errors.New("grant: token is for another profile")
	ErrWrongRequirement = errors.New("grant: token is for another requirement")
	ErrReplayed         = errors.New("grant: token was already used")
)

// MismatchError reports that a token was issued for something other than
// what is about to run.
type MismatchError struct {
	// Field is the Binding field that differs: "ExecutionID", "Argv",
	// "Command", "Dir", "Profile", "Kind" or "Target".
	Field string
	// Want is the value from the Binding passed to Redeem (what is about to
	// run); Got is the value the token was issued for. Argv is rendered
	// with %q; Profile values are the fingerprints.
	Want, Got string
	// Err is the sentinel for the field, e.g. ErrWrongCommand.
	Err error
}

func (e *MismatchError) Error() string {
	want, got := e.Want, e.Got
	if e.Field != "Argv" { // Argv is already quoted
		want, got = fmt.Sprintf("%q", want), fmt.Sprintf("%q", got)
	}
	return fmt.Sprintf("%v: %s is %s but the approval was for %s; ask for approval of what will run",
		e.Err, e.Field, want, got)
}

func (e *MismatchError) Unwrap() error { return e.Err }

// Issuer mints and redeems tokens under one HMAC key. It is safe for
// concurrent use.
type Issuer struct {
	key    []byte
	ledger Ledger

	mu sync.Mutex
	// deadlines holds, for each token this Issuer minted, its deadline as
	// time.Now().Add(ttl), which carries Go's monotonic clock reading.
	deadlines map[[32]byte]time.Time
	sweepAt   int
}

// minKeyLen is the HMAC-SHA256 key size below which we refuse to work.
const minKeyLen = 32

// NewIssuer returns an Issuer that signs with key (at least 32 bytes, copied)
// and spends tokens in ledger. Processes that redeem each other's tokens must
// share both the key and the ledger.
func NewIssuer(key []byte, ledger Ledger) (*Issuer, error) {
	if len(key) < minKeyLen {
		return nil, fmt.Errorf("grant: key is %d bytes; use at least %d random bytes", len(key), minKeyLen)
	}
	if ledger == nil {
		return nil, errors.New("grant: nil ledger; use NewMemoryLedger for a single process")
	}
	return &Issuer{
		key:       slices.Clone(key),
		ledger:    ledger,
		deadlines: make(map[[32]byte]time.Time),
		sweepAt:   minSweep,
	}, nil
}

// NewRandomIssuer returns an Issuer with a fresh random key and a memory
// ledger: tokens it issues can be redeemed only by it, in this process.
func NewRandomIssuer() *Issuer {
	key := make([]byte, minKeyLen)
	rand.Read(key) // never returns an error; it crashes the program instead
	i, err := NewIssuer(key, NewMemoryLedger())
	if err != nil {
		panic(err) // unreachable: the key is long enough and the ledger non-nil
	}
	return i
}

// Issue returns a token that authorises b for ttl. It sets b.Expires and
// b.Nonce itself, ignoring any values passed in. b.ExecutionID and b.Kind
// must be set, b.Dir must be absolute (it is cleaned), and at most one of
// b.Argv and b.Command may be set.
func (i *Issuer) Issue(b Binding, ttl time.Duration) (Token, error) {
	if ttl <= 0 {
		return "", fmt.Errorf("%w: ttl %v is not positive", ErrInvalidBinding, ttl)
	}
	switch {
	case b.ExecutionID == "":
		return "", fmt.Errorf("%w: no ExecutionID", ErrInvalidBinding)
	case b.Kind == "":
		return "", fmt.Errorf("%w: no requirement Kind", ErrInvalidBinding)
	case !filepath.IsAbs(b.Dir):
		return "", fmt.Errorf("%w: Dir %q is not absolute", ErrInvalidBinding, b.Dir)
	case len(b.Argv) > 0 && b.Command != "":
		return "", fmt.Errorf("%w: both Argv and Command are set; bind one", ErrInvalidBinding)
	}
	b.Argv = slices.Clone(b.Argv)
	if len(b.Argv) == 0 {
		b.Argv = nil
	}
	b.Dir = filepath.Clean(b.Dir)
	rand.Read(b.Nonce[:])
	now := time.Now()
	deadline := now.Add(ttl)
	// Round(0) strips the monotonic reading: the wall time is what travels
	// in the token, for other processes.
	b.Expires = deadline.Round(0)

	payload, err := encodePayload(b)
	if err != nil {
		return "", err
	}
	tok, mac := encodeToken(i.key, payload)
	if len(tok) > maxTokenLen {
		return "", fmt.Errorf("%w: the token would be longer than %d bytes", ErrInvalidBinding, maxTokenLen)
	}

	i.mu.Lock()
	i.deadlines[mac] = deadline
	if len(i.deadlines) >= i.sweepAt {
		for m, d := range i.deadlines {
			if now.After(d) {
				delete(i.deadlines, m)
			}
		}
		i.sweepAt = max(minSweep, 2*len(i.deadlines))
	}
	i.mu.Unlock()
	return tok, nil
}

// Redeem checks t against want, the Binding of what is about to run, and
// spends it. It verifies the MAC first (ErrTampered, and nothing else about
// the token is inspected), then the expiry (ErrExpired), then each field
// against want: ExecutionID, Argv or Command, Dir (compared after
// filepath.Clean), Profile, Kind and Target. want.Expires and want.Nonce are
// ignored. Only when every check passes is the token spent in the ledger
// (ErrReplayed if it already was). On success it returns the Binding the
// token was issued for.
func (i *Issuer) Redeem(t Token, want Binding) (Binding, error) {
	got, mac, err := decodeToken(i.key, t)
	if err != nil {
		return Binding{}, err
	}
	if err := i.checkExpiry(mac, got.Expires); err != nil {
		return Binding{}, err
	}
	if err := compare(want, got); err != nil {
		return Binding{}, err
	}
	if err := i.ledger.Spend(mac, got.Expires); err != nil {
		if errors.Is(err, ErrReplayed) {
			return Binding{}, err
		}
		// A ledger we cannot reach must not let the token through.
		return Binding{}, fmt.Errorf("grant: recording the token as used: %w", err)
	}
	return got, nil
}

// checkExpiry uses the monotonic deadline for tokens this Issuer minted and
// the wall clock for the rest.
func (i *Issuer) checkExpiry(mac [32]byte, expires time.Time) error {
	i.mu.Lock()
	deadline, ok := i.deadlines[mac]
	i.mu.Unlock()
	if !ok {
		deadline = expires
	}
	if time.Now().After(deadline) {
		return fmt.Errorf("%w at %s; ask for approval again", ErrExpired, expires.Format(time.RFC3339Nano))
	}
	return nil
}

// compare returns a *MismatchError for the first field in which what is
// about to run (want) differs from what the token was issued for (got).
func compare(want, got Binding) error {
	mismatch := func(field, w, g string, err error) error {
		return &MismatchError{Field: field, Want: w, Got: g, Err: err}
	}
	if want.ExecutionID != got.ExecutionID {
		return mismatch("ExecutionID", want.ExecutionID, got.ExecutionID, ErrWrongExecution)
	}
	// A token for an argv does not authorise the same words as shell text,
	// nor the other way round: the two run differently. Both checks apply.
	if !slices.Equal(want.Argv, got.Argv) {
		return mismatch("Argv", fmt.Sprintf("%q", want.Argv), fmt.Sprintf("%q", got.Argv), ErrWrongCommand)
	}
	if want.Command != got.Command {
		return mismatch("Command", want.Command, got.Command, ErrWrongCommand)
	}
	if !filepath.IsAbs(want.Dir) || filepath.Clean(want.Dir) != got.Dir {
		return mismatch("Dir", want.Dir, got.Dir, ErrWrongDir)
	}
	if want.Profile != got.Profile {
		return mismatch("Profile", want.Profile, got.Profile, ErrWrongProfile)
	}
	if want.Kind != got.Kind {
		return mismatch("Kind", want.Kind, got.Kind, ErrWrongRequirement)
	}
	if want.Target != got.Target {
		return mismatch("Target", want.Target, got.Target, ErrWrongRequirement)
	}
	return nil
}
