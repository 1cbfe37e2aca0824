package audit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/airlockhq/airlock/grant"
)

// MaxLineSize bounds one line of the log, newline included. Append refuses
// larger events and the readers skip larger lines, so a corrupt file cannot
// make a reader hold an unbounded line in memory.
const MaxLineSize = 1 << 20

var (
	// ErrClosed is returned by Append after Close.
	ErrClosed = errors.New("audit: log is closed")
	// ErrTooLarge is returned by Append for an event whose line would be
	// longer than MaxLineSize.
	ErrTooLarge = errors.New("audit: event is larger than MaxLineSize")
)

// Log appends events to one file. It is safe for concurrent use, and any
// number of processes may append to the same file at once.
type Log struct {
	path string

	// closeMu is held shared by every Append from start to fsync and
	// exclusively by Close, so the file is never closed under an Append.
	closeMu sync.RWMutex
	// writeMu orders the write section within this process: flock(2)
	// belongs to the open file description, which all goroutines share, so
	// it cannot order them by itself.
	writeMu sync.Mutex
	f       *os.File
}

// Open opens the log at path for appending, creating it (mode 0600) and its
// parent directories (mode 0700) as needed. An existing file keeps its mode.
// The file is opened read-write only so that Append can check its last byte.
func Open(path string) (*Log, error) {
	if path == "" {
		return nil, errors.New("audit: no log path (the home directory is unknown); set AIRLOCK_AUDIT_LOG")
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("audit: creating the log directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit: opening the log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = fmt.Errorf("%s is a %v, not a regular file", path, fi.Mode().Type())
		}
		return nil, fmt.Errorf("audit: opening the log: %w", err)
	}
	// Make the file's directory entry durable too, in case we created it:
	// fsync of the file alone does not persist its name. A file with a
	// line in it needs none: whoever wrote the first line synced the
	// directory here before it could append, and every hook call and run
	// would otherwise pay a second fsync.
	if fi.Size() == 0 {
		if d, err := os.Open(dir); err == nil {
			d.Sync()
			d.Close()
		}
	}
	return &Log{path: path, f: f}, nil
}

// Path returns the path the log was opened with.
func (l *Log) Path() string { return l.path }

// Append writes e as one line and returns nil only once the line is durable
// (written with one write(2), then fsync'd). A zero e.Time is set to now;
// times are stored in UTC. The text of any grant token anywhere in the
// event is replaced with grant.Redacted before anything is written.
func (l *Log) Append(e Event) error {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Time = e.Time.UTC()
	line, err := eventJSON(&e)
	if err != nil {
		return fmt.Errorf("audit: encoding a %q event: %w", e.Type, err)
	}
	// A grant.Token marshals as grant.Redacted already; this catches a
	// token converted to a plain string, in any field. JSON leaves the
	// token alphabet unescaped, so redacting the encoded line is exact and
	// keeps it valid JSON.
	if s, r := string(line), grant.Redact(string(line)); r != s {
		line = []byte(r)
	}
	line = append(line, '\n')
	if len(line) > MaxLineSize {
		return fmt.Errorf("%w: a %q event is %d bytes; put less in Detail", ErrTooLarge, e.Type, len(line))
	}

	l.closeMu.RLock()
	defer l.closeMu.RUnlock()
	if l.f == nil {
		return ErrClosed
	}
	if err := l.write(line); err != nil {
		return fmt.Errorf("audit: appending to %s: %w", l.path, err)
	}
	// fsync outside writeMu: concurrent appenders share the disk flush
	// instead of queueing behind each other's.
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("audit: syncing %s: %w", l.path, err)
	}
	return nil
}

// write appends line under writeMu and an exclusive flock(2). O_APPEND
// alone makes each write land at the end of the file, but only the lock
// stops a long line from being interleaved with another process's, and it
// lets us end a line torn by a crash before we write after it.
func (l *Log) write(line []byte) error {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	rc, err := l.f.SyscallConn()
	if err != nil {
		return err
	}
	var lockErr error
	if err := rc.Control(func(fd uintptr) { lockErr = flock(int(fd), syscall.LOCK_EX) }); err != nil {
		return err
	}
	if lockErr != nil {
		return fmt.Errorf("locking: %w", lockErr)
	}
	defer rc.Control(func(fd uintptr) { flock(int(fd), syscall.LOCK_UN) })

	torn, err := l.endsTorn()
	if err != nil {
		return err
	}
	if torn {
		line = append([]byte{'\n'}, line...)
	}
	// os.File.Write issues one write(2) for the line, and only retries
	// with the rest if the kernel wrote less (a full disk, a fatal signal).
	_, err = l.f.Write(line)
	return err
}

// endsTorn reports whether the file is non-empty and does not end with a
// newline: the last line was cut short by a writer that died.
func (l *Log) endsTorn() (bool, error) {
	fi, err := l.f.Stat()
	if err != nil {
		return false, err
	}
	if fi.Size() == 0 {
		return false, nil
	}
	var last [1]byte
	if _, err := l.f.ReadAt(last[:], fi.Size()-1); err != nil {
		return false, err
	}
	return last[0] != '\n', nil
}

// flock is flock(2), retried when a signal interrupts the wait.
func flock(fd, how int) error {
	for {
		if err := syscall.Flock(fd, how); err != syscall.EINTR {
			return err
		}
	}
}

// Close closes the file. It waits for Appends in progress; later Appends
// return ErrClosed.
func (l *Log) Close() error {
	l.closeMu.Lock()
	defer l.closeMu.Unlock()
	if l.f == nil {
		return ErrClosed
	}
	err := l.f.Close()
	l.f = nil
	return err
}
