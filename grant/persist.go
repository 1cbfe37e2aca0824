package grant

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Persistence across processes. A Claude Code hook issues a grant in one
// process and "airlock run" redeems it in another, later one: both need
// the same HMAC key and the same record of spent tokens. [OpenDir] keeps
// both in one directory owned by the user:
//
//	DIR/key           32 random bytes, mode 0600, created once, atomically
//	DIR/spent         the FileLedger's records
//	DIR/spent.lock    the lock every Spend holds (flock)

// DefaultDir is where OpenDir keeps the key and the ledger unless told
// otherwise:
//
//  1. $AIRLOCK_GRANT_DIR, if set and not empty;
//  2. $XDG_STATE_HOME/airlock/grants, if XDG_STATE_HOME is absolute;
//  3. ~/.local/state/airlock/grants.
//
// It returns "" when none applies because the home directory is unknown.
func DefaultDir() string {
	if d := os.Getenv("AIRLOCK_GRANT_DIR"); d != "" {
		return d
	}
	if s := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(s) {
		return filepath.Join(s, "airlock", "grants")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".local", "state", "airlock", "grants")
}

// OpenDir returns an Issuer whose key and ledger live in dir (absolute;
// created with mode 0700 if missing), so that every process opening the same dir
// redeems the tokens of the others, each at most once.
func OpenDir(dir string) (*Issuer, error) {
	if dir == "" {
		return nil, errors.New("grant: no directory for the key and ledger (the home directory is unknown); set AIRLOCK_GRANT_DIR")
	}
	if !filepath.IsAbs(dir) {
		// Processes in different directories would each find their own.
		return nil, fmt.Errorf("grant: the key and ledger directory %q is not absolute; set AIRLOCK_GRANT_DIR to an absolute path", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("grant: creating %s: %w", dir, err)
	}
	key, err := LoadKeyFile(filepath.Join(dir, "key"))
	if err != nil {
		return nil, err
	}
	return NewIssuer(key, &FileLedger{Path: filepath.Join(dir, "spent")})
}

// LoadKeyFile returns the key in path, creating it first with 32 random
// bytes if it does not exist. Creation is atomic: the key is written to a
// temporary file, synced, and linked to path, which fails if another
// process got there first; then that process's key is read instead, so
// all of them end up with the same key. An existing key file must be a
// regular file of at least 32 bytes that only its owner can read.
func LoadKeyFile(path string) ([]byte, error) {
	key, err := readKeyFile(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".key-*")
	if err != nil {
		return nil, fmt.Errorf("grant: creating the key: %w", err)
	}
	defer os.Remove(tmp.Name())
	key = make([]byte, minKeyLen)
	rand.Read(key)
	_, err = tmp.Write(key)
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("grant: writing the key: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("grant: creating the key: %w", err)
	}
	syncDir(dir)
	return readKeyFile(path)
}

func readKeyFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("grant: reading the key: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("grant: reading the key: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("grant: the key %s is not a regular file; remove it", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("grant: the key %s can be read by others (mode %v); remove it so a new one is made, or chmod 600 it", path, fi.Mode().Perm())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return nil, fmt.Errorf("grant: the key %s belongs to uid %d, not to this user; remove it", path, st.Uid)
	}
	key, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return nil, fmt.Errorf("grant: reading the key: %w", err)
	}
	if len(key) < minKeyLen {
		return nil, fmt.Errorf("grant: the key %s is %d bytes, shorter than %d; remove it so a new one is made", path, len(key), minKeyLen)
	}
	return key, nil
}

// FileLedger is a Ledger in a file that any number of processes share.
// Each Spend takes an exclusive flock on Path+".lock", reads the spent
// records, and appends its own (or rewrites the file without the expired
// ones, through a temporary file and a rename) and fsyncs before the lock
// is released. A record is the token's MAC and its expiry.
//
// A token is forgotten an hour after its expiry (ForgetAfter), so a wall
// clock set back by less than that cannot revive a spent token that the
// ledger had dropped.
type FileLedger struct {
	// Path is the ledger file; its directory must exist.
	Path string
}

// recordLen is one record: a 32-byte MAC and a big-endian int64 expiry in
// Unix nanoseconds.
const recordLen = 32 + 8

// ForgetAfter is how long after a token's expiry a FileLedger keeps it.
const ForgetAfter = time.Hour

// Spend implements [Ledger].
func (l *FileLedger) Spend(mac [32]byte, expires time.Time) error {
	lock, err := os.OpenFile(l.Path+".lock", os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("grant: opening the ledger lock: %w", err)
	}
	defer lock.Close()
	if err := flock(lock, syscall.LOCK_EX); err != nil {
		return fmt.Errorf("grant: locking the ledger: %w", err)
	}
	data, err := os.ReadFile(l.Path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("grant: reading the ledger: %w", err)
	}
	// A torn last record is a Spend that never returned: its token never
	// authorised anything, so it is dropped with the next rewrite.
	whole := len(data) - len(data)%recordLen
	now := time.Now()
	live, expired := 0, 0
	for off := 0; off < whole; off += recordLen {
		if bytes.Equal(data[off:off+32], mac[:]) {
			return ErrReplayed
		}
		if recordExpired(data[off:off+recordLen], now) {
			expired++
		} else {
			live++
		}
	}
	rec := make([]byte, 0, recordLen)
	rec = append(rec, mac[:]...)
	rec = binary.BigEndian.AppendUint64(rec, uint64(expires.UnixNano()))

	if expired > minSweep && expired > live || whole != len(data) {
		keep := make([]byte, 0, (live+1)*recordLen)
		for off := 0; off < whole; off += recordLen {
			if !recordExpired(data[off:off+recordLen], now) {
				keep = append(keep, data[off:off+recordLen]...)
			}
		}
		return l.rewrite(append(keep, rec...))
	}
	f, err := os.OpenFile(l.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("grant: opening the ledger: %w", err)
	}
	_, err = f.Write(rec)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("grant: recording the token: %w", err)
	}
	return nil
}

func recordExpired(rec []byte, now time.Time) bool {
	exp := time.Unix(0, int64(binary.BigEndian.Uint64(rec[32:])))
	return now.After(exp.Add(ForgetAfter))
}

// rewrite replaces the ledger with data, durably, under the caller's lock.
func (l *FileLedger) rewrite(data []byte) error {
	dir := filepath.Dir(l.Path)
	tmp, err := os.CreateTemp(dir, ".spent-*")
	if err != nil {
		return fmt.Errorf("grant: rewriting the ledger: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), l.Path)
	}
	if err != nil {
		return fmt.Errorf("grant: rewriting the ledger: %w", err)
	}
	syncDir(dir)
	return nil
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}

// syncDir makes a directory entry durable; a failure only weakens
// durability, never correctness, so it is not reported.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
