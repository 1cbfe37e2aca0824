package approval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// ttyInput is a terminal put in the prompt's mode: canonical (the kernel
// edits the line and hands it over when Enter is pressed), echoing what
// is typed, with Enter's \r read as a line end and output post-processed
// so that the prompt's lines start at the left. That is the mode a shell
// leaves, not the one a full-screen program such as Claude Code does (raw:
// no line editing, no echo, Enter sends \r), in which a line-reading
// prompt would never see an answer, and the person would not see what
// they type.
type ttyInput struct {
	rc    syscall.RawConn
	saved unix.Termios // the mode found, put back by restore
	wake  int          // an eventfd, written when the prompt's context is done
	lines lineBuffer
}

// startTTY puts in in the prompt's mode and returns it, or nil when in is
// not a terminal.
func startTTY(in io.Reader) (*ttyInput, error) {
	f, ok := in.(*os.File)
	if !ok {
		return nil, nil
	}
	// SyscallConn rather than Fd, which would make f blocking for good.
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, nil
	}
	var saved *unix.Termios
	var ioErr error
	if err := rc.Control(func(fd uintptr) { saved, ioErr = unix.IoctlGetTermios(int(fd), unix.TCGETS) }); err != nil || ioErr != nil {
		return nil, nil // not a terminal
	}
	mode := *saved
	mode.Iflag |= unix.ICRNL
	mode.Iflag &^= unix.IGNCR | unix.INLCR
	mode.Oflag |= unix.OPOST | unix.ONLCR
	mode.Lflag |= unix.ICANON | unix.ECHO | unix.ECHOE | unix.ECHOK
	if err := rc.Control(func(fd uintptr) { ioErr = unix.IoctlSetTermios(int(fd), unix.TCSETS, &mode) }); err != nil {
		return nil, fmt.Errorf("setting up the terminal: %w", err)
	}
	if ioErr != nil {
		return nil, fmt.Errorf("setting up the terminal (TCSETS): %w", ioErr)
	}
	t := &ttyInput{rc: rc, saved: *saved}
	if t.wake, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		return nil, errors.Join(fmt.Errorf("setting up the terminal (eventfd): %w", err), t.putBack())
	}
	return t, nil
}

// discardTyped discards what was typed and not yet read.
func (t *ttyInput) discardTyped() error {
	var ioErr error
	if err := t.rc.Control(func(fd uintptr) { ioErr = unix.IoctlSetInt(int(fd), unix.TCFLSH, unix.TCIFLUSH) }); err != nil {
		return fmt.Errorf("discarding what was typed ahead: %w", err)
	}
	if ioErr != nil {
		return fmt.Errorf("discarding what was typed ahead (TCFLSH): %w", ioErr)
	}
	return nil
}

// readLine reads the next line typed. The read is done here, with ctx
// ending the wait, so that nothing is left reading the terminal once the
// prompt is over: what is typed after it is the program's.
func (t *ttyInput) readLine(ctx context.Context) (string, error) {
	woken := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(woken)
		unix.Write(t.wake, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	})
	defer func() {
		// A wake-up under way must be over before restore closes wake,
		// or it could write to whatever file next gets its number.
		if !stop() {
			<-woken
		}
	}()
	buf := make([]byte, maxLine)
	for {
		if line, ok := t.lines.next(); ok {
			return line, nil
		}
		n, err := t.read(ctx, buf)
		if err != nil {
			return "", err
		}
		if n == 0 {
			return "", io.EOF // Ctrl-D, or the terminal hung up
		}
		t.lines.add(buf[:n])
	}
}

// read waits until the terminal or ctx has something, and reads.
func (t *ttyInput) read(ctx context.Context, buf []byte) (n int, err error) {
	cerr := t.rc.Control(func(fd uintptr) {
		for {
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(t.wake), Events: unix.POLLIN}}
			if _, err = unix.Poll(fds, -1); err == unix.EINTR {
				continue
			} else if err != nil {
				err = fmt.Errorf("poll: %w", err)
				return
			}
			switch {
			case fds[1].Revents != 0:
				n, err = 0, ctx.Err()
				return
			case fds[0].Revents&unix.POLLNVAL != 0:
				n, err = 0, os.ErrClosed
				return
			case fds[0].Revents == 0:
				continue
			}
			// Readable, hung up (POLLHUP) or failed: the read says which.
			n, err = unix.Read(int(fd), buf)
			if err == unix.EAGAIN || err == unix.EINTR {
				continue
			}
			if err != nil {
				n = 0
			}
			return
		}
	})
	return n, errors.Join(cerr, err)
}

// restore puts back the mode the terminal was found in.
func (t *ttyInput) restore() error {
	unix.Close(t.wake)
	return t.putBack()
}

func (t *ttyInput) putBack() error {
	var ioErr error
	if err := t.rc.Control(func(fd uintptr) { ioErr = unix.IoctlSetTermios(int(fd), unix.TCSETS, &t.saved) }); err != nil {
		return fmt.Errorf("restoring the terminal's mode: %w", err)
	}
	if ioErr != nil {
		return fmt.Errorf("restoring the terminal's mode (TCSETS): %w", ioErr)
	}
	return nil
}
