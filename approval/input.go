package approval

import (
	"bytes"
	"context"
	"io"
)

// maxLine is the longest line kept as typed; a longer one is no answer.
const maxLine = 4096

// overlong stands for a line longer than maxLine: it matches no choice.
const overlong = "\x00overlong"

// lineBuffer splits what is read into lines. A line ends with \n, \r or
// \r\n: a terminal in raw mode sends \r for Enter. What follows the last
// line end waits for the rest of its line.
type lineBuffer struct {
	buf     []byte
	skipLF  bool // the last line ended with \r: a \n next ends nothing
	tooLong bool // the line being read has outgrown maxLine
}

func (l *lineBuffer) add(p []byte) {
	l.buf = append(l.buf, p...)
}

// next returns the next whole line, if there is one.
func (l *lineBuffer) next() (string, bool) {
	if l.skipLF && len(l.buf) > 0 {
		if l.buf[0] == '\n' {
			l.buf = l.buf[1:]
		}
		l.skipLF = false
	}
	i := bytes.IndexAny(l.buf, "\r\n")
	if i < 0 {
		if len(l.buf) > maxLine {
			l.buf, l.tooLong = l.buf[:0], true
		}
		return "", false
	}
	line := string(l.buf[:i])
	l.skipLF = l.buf[i] == '\r'
	l.buf = l.buf[i+1:]
	if l.tooLong || len(line) > maxLine {
		l.tooLong = false
		return overlong, true
	}
	return line, true
}

// streamInput reads lines from an In that is not a terminal. A Read
// cannot be interrupted, so one goroutine per Terminal reads In for as
// long as In lasts and hands each line to the prompt that asks for the
// next one; a line read while no prompt waits is kept for the next prompt
// rather than lost, and a prompt that is cancelled leaves the read to the
// next one. A line not ended before the end of input is no answer.
type streamInput struct {
	src   io.Reader
	lines chan string   // the lines, one at a time, as prompts take them
	end   chan struct{} // closed when src has ended, after the last line
	err   error         // why src ended; set before end is closed
}

func newStreamInput(src io.Reader) *streamInput {
	s := &streamInput{src: src, lines: make(chan string), end: make(chan struct{})}
	go s.run()
	return s
}

func (s *streamInput) run() {
	var l lineBuffer
	buf := make([]byte, 512)
	for {
		for line, ok := l.next(); ok; line, ok = l.next() {
			s.lines <- line
		}
		n, err := s.src.Read(buf)
		l.add(buf[:n])
		if err != nil {
			for line, ok := l.next(); ok; line, ok = l.next() {
				s.lines <- line
			}
			s.err = err
			close(s.end)
			return
		}
	}
}

func (s *streamInput) readLine(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	select {
	case line := <-s.lines:
		return line, nil
	case <-s.end:
		return "", s.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
