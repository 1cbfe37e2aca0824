package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// TornLineError reports the lines Read skipped because they are not events:
// a line cut short by a writer that was killed mid-write (and then ended by
// the next Append), or a line damaged some other way.
type TornLineError struct {
	Lines []int // 1-based numbers of the skipped lines, in file order
}

func (e *TornLineError) Error() string {
	return fmt.Sprintf("audit: skipped %d torn or corrupt line(s), the first at line %d; the other events were read",
		len(e.Lines), e.Lines[0])
}

// Read calls fn for each event in r, in order, and stops at the first error
// fn returns, returning it unchanged.
//
// How it treats lines that are not events:
//
//   - A final line without a newline is the one place a torn line is
//     expected (a writer is mid-write, or died there). If it parses as a
//     whole event it is delivered; otherwise it is skipped silently. No
//     Append that returned nil can have left it.
//   - Any other line that does not parse, or is longer than MaxLineSize, is
//     skipped. Read goes on to the end and then returns a *TornLineError
//     naming the skipped lines, after every good event was delivered.
//   - Blank lines are ignored.
//
// Numbers inside Detail are decoded as json.Number, so they print back
// exactly as they were written.
func Read(r io.Reader, fn func(Event) error) error {
	lr := lineReader{br: bufio.NewReaderSize(r, 64<<10)}
	var skipped []int
	for n := 1; ; n++ {
		line, terminated, tooLong, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("audit: reading the log: %w", err)
		}
		if len(line) == 0 && !tooLong {
			continue
		}
		e, ok := parseLine(line)
		if tooLong || !ok {
			if terminated {
				skipped = append(skipped, n)
			}
			continue
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	if len(skipped) > 0 {
		return &TornLineError{Lines: skipped}
	}
	return nil
}

// parseLine decodes one line. It accepts exactly one JSON object and
// nothing after it.
func parseLine(line []byte) (Event, bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return Event{}, false
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var e Event
	if err := dec.Decode(&e); err != nil {
		return Event{}, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return Event{}, false
	}
	return e, true
}

// lineReader splits a stream into lines without holding more than
// MaxLineSize of any one line.
type lineReader struct {
	br *bufio.Reader
}

// next returns the next line without its newline. terminated reports
// whether the line ended with a newline rather than at EOF; tooLong that
// it exceeded MaxLineSize, in which case line is nil. It returns io.EOF only
// when there is no line left at all.
func (lr *lineReader) next() (line []byte, terminated, tooLong bool, err error) {
	read := 0
	for {
		frag, err := lr.br.ReadSlice('\n')
		read += len(frag)
		if !tooLong {
			if len(line)+len(frag) > MaxLineSize {
				tooLong, line = true, nil
			} else {
				line = append(line, frag...)
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == nil:
			if !tooLong {
				line = line[:len(line)-1]
			}
			return line, true, tooLong, nil
		case err == io.EOF && read > 0:
			return line, false, tooLong, nil
		default:
			return nil, false, false, err
		}
	}
}

// pollInterval is how often Follow looks for new lines, and for the file
// to appear, when it has reached the end.
const pollInterval = 100 * time.Millisecond

// Follow calls fn for every event already in the file at path and then for
// each new one as it is appended, until ctx is done (it then returns
// ctx.Err()) or fn returns an error (which it returns unchanged). If the
// file does not exist yet, Follow waits for it. If the file is replaced or
// truncated, Follow starts again at the beginning of the new contents.
//
// Follow delivers a line only once its newline is written, so it never
// sees a line mid-write. Lines that do not parse are skipped silently,
// since a follower has no end at which to report them; Read reports them.
// Follow polls; an event shows up at most about 100ms after it is written.
func Follow(ctx context.Context, path string, fn func(Event) error) error {
	f, err := waitOpen(ctx, path)
	if err != nil {
		return err
	}
	defer func() { f.Close() }()

	var (
		buf      = make([]byte, 64<<10)
		pending  []byte // bytes after the last newline seen
		skipping bool   // dropping the rest of a line longer than MaxLineSize
		offset   int64  // bytes consumed from f
	)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := f.Read(buf)
		if n > 0 {
			offset += int64(n)
			pending = append(pending, buf[:n]...)
			start := 0
			for {
				i := bytes.IndexByte(pending[start:], '\n')
				if i < 0 {
					break
				}
				line := pending[start : start+i]
				start += i + 1
				if skipping {
					skipping = false
					continue
				}
				if e, ok := parseLine(line); ok {
					if err := fn(e); err != nil {
						return err
					}
				}
			}
			pending = append(pending[:0], pending[start:]...)
			if len(pending) > MaxLineSize {
				pending, skipping = pending[:0], true
			}
			continue
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("audit: reading %s: %w", path, err)
		}

		// At the end of what we have. If the path now names another file,
		// or ours shrank, start over on what is there now.
		if fi, err := os.Stat(path); err == nil {
			cur, err := f.Stat()
			if err != nil {
				return fmt.Errorf("audit: reading %s: %w", path, err)
			}
			switch {
			case !os.SameFile(fi, cur):
				nf, err := os.Open(path)
				if err != nil && !errors.Is(err, fs.ErrNotExist) {
					return fmt.Errorf("audit: reopening %s: %w", path, err)
				}
				if err == nil {
					f.Close()
					f, offset, pending, skipping = nf, 0, pending[:0], false
					continue
				}
			case cur.Size() < offset:
				if _, err := f.Seek(0, io.SeekStart); err != nil {
					return fmt.Errorf("audit: rewinding %s: %w", path, err)
				}
				offset, pending, skipping = 0, pending[:0], false
				continue
			}
		}
		if err := sleep(ctx, pollInterval); err != nil {
			return err
		}
	}
}

// waitOpen opens path for reading, waiting for it to be created.
func waitOpen(ctx context.Context, path string) (*os.File, error) {
	for {
		f, err := os.Open(path)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("audit: opening %s: %w", path, err)
		}
		if err := sleep(ctx, pollInterval); err != nil {
			return nil, err
		}
	}
}

// sleep waits for d or until ctx is done, and returns ctx.Err() then.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
