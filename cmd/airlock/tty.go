package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/sandbox"
)

// ttyMode is --tty: whether the command gets a terminal of its own.
// "auto" gives it one when airlock's stdin and stdout are both terminals,
// as a person at a terminal runs it; pipes otherwise (a harness, a hook,
// "airlock run ... | less").
type ttyMode string

const (
	ttyAuto   ttyMode = "auto"
	ttyAlways ttyMode = "always"
	ttyNever  ttyMode = "never"
)

func (m *ttyMode) String() string { return string(*m) }

// IsBoolFlag lets "--tty" alone mean always and "--tty=false" never.
func (m *ttyMode) IsBoolFlag() bool { return true }

func (m *ttyMode) Set(v string) error {
	switch v {
	case "auto", "always", "never":
		*m = ttyMode(v)
	case "true":
		*m = ttyAlways
	case "false":
		*m = ttyNever
	default:
		return fmt.Errorf("want auto, always or never (--tty alone is always, --no-tty never)")
	}
	return nil
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// wants reports whether the run gets a terminal.
func (m ttyMode) wants(stdin, stdout *os.File) bool {
	switch m {
	case ttyAlways:
		return true
	case ttyNever:
		return false
	}
	return isTerminal(stdin) && isTerminal(stdout)
}

// userTerminal is the terminal of the person running airlock while the
// command has one of its own: raw, so that every key (^C, ^Z, arrows)
// goes to the command's pty as it is typed and the pty's own line
// discipline acts on it; put back as it was by restore, which runRun
// defers so every way out of the run (exit, signal, timeout, a setup
// error) passes through it.
type userTerminal struct {
	in      int
	mu      sync.Mutex // saved, between restore and suspend
	saved   *unix.Termios
	raw     unix.Termios
	winFrom int // where the window size is read: stdout, else stdin
	sigs    chan os.Signal
}

// newUserTerminal reads the window size and, when stdin is a terminal,
// makes it raw.
func newUserTerminal(stdin, stdout *os.File) (*userTerminal, *sandbox.Terminal, error) {
	u := &userTerminal{in: -1, winFrom: -1}
	for _, f := range []*os.File{stdout, stdin} {
		if isTerminal(f) {
			u.winFrom = int(f.Fd())
			break
		}
	}
	t := &sandbox.Terminal{}
	if ws, err := u.size(); err == nil {
		t.Rows, t.Cols = ws.Row, ws.Col
	}
	if !isTerminal(stdin) {
		return u, t, nil
	}
	fd := int(stdin.Fd())
	saved, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, nil, fmt.Errorf("read the terminal's modes: %w", err)
	}
	raw := *saved
	// cfmakeraw(3).
	raw.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	raw.Oflag &^= unix.OPOST
	raw.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	raw.Cflag &^= unix.CSIZE | unix.PARENB
	raw.Cflag |= unix.CS8
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &raw); err != nil {
		return nil, nil, fmt.Errorf("put the terminal in raw mode: %w (run with --no-tty for pipes)", err)
	}
	u.in, u.saved, u.raw = fd, saved, raw
	return u, t, nil
}

func (u *userTerminal) size() (*unix.Winsize, error) {
	if u.winFrom < 0 {
		return nil, unix.ENOTTY
	}
	return unix.IoctlGetWinsize(u.winFrom, unix.TIOCGWINSZ)
}

// follow passes each change of the window size (SIGWINCH) on to proc.
func (u *userTerminal) follow(proc *sandbox.Process) {
	u.sigs = make(chan os.Signal, 1)
	signal.Notify(u.sigs, syscall.SIGWINCH)
	go func() {
		for range u.sigs {
			if ws, err := u.size(); err == nil {
				_ = proc.Resize(ws.Row, ws.Col)
			}
		}
	}()
}

// restore puts the terminal's modes back and stops following its size.
func (u *userTerminal) restore() {
	if u == nil {
		return
	}
	if u.sigs != nil {
		signal.Stop(u.sigs)
		close(u.sigs)
		u.sigs = nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.saved != nil {
		// TCSETSW would wait for output the user's terminal may never
		// drain (a ^S the command left); TCSETS does not.
		_ = unix.IoctlSetTermios(u.in, unix.TCSETS, u.saved)
		u.saved = nil
	}
}

// suspend is Terminal.Suspend: ^Z stopped the command, so airlock stops
// too, as a terminal program does, and the shell it runs under gets its
// prompt back (and its job control: fg, bg). The user's terminal is put
// back as it was for the shell, airlock stops its own process group
// (SIGTSTP, never caught here, so its default action), and once
// continued it makes the terminal raw again; the sandbox then resumes
// the command. Continued in the background (bg), that TCSETS stops
// airlock again (SIGTTOU) until the job is brought to the foreground.
func (u *userTerminal) suspend() {
	if !canStop() {
		return
	}
	// Continued is known by SIGCONT, not by kill returning: another
	// thread may take the stop a moment later.
	cont := make(chan os.Signal, 1)
	signal.Notify(cont, syscall.SIGCONT)
	defer signal.Stop(cont)
	u.mu.Lock()
	if u.saved != nil {
		_ = unix.IoctlSetTermios(u.in, unix.TCSETS, u.saved)
	}
	u.mu.Unlock()
	if err := unix.Kill(0, unix.SIGTSTP); err != nil {
		return
	}
	// The run is held until this returns: should the stop never come
	// (the shell ended between canStop and the kill, and the kernel
	// dropped the SIGTSTP), airlock goes on rather than wait for a
	// SIGCONT nobody will send. Stopped, it checks nothing.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for waiting := true; waiting; {
		select {
		case <-cont:
			waiting = false
		case <-tick.C:
			waiting = canStop()
		}
	}
	u.mu.Lock()
	if u.saved != nil {
		_ = unix.IoctlSetTermios(u.in, unix.TCSETS, &u.raw)
	}
	u.mu.Unlock()
}

// canStop reports whether a SIGTSTP would stop airlock: the kernel drops
// it for an orphaned process group, one with no shell of the session
// (airlock's parent, in another group of the same session) to continue
// it.
func canStop() bool {
	ppid := os.Getppid()
	if pg, err := unix.Getpgid(ppid); err != nil || pg == unix.Getpgrp() {
		return false
	}
	ps, err := unix.Getsid(ppid)
	if err != nil {
		return false
	}
	own, err := unix.Getsid(0)
	return err == nil && own == ps
}

// crlfWriter ends each line with \r\n: airlock's own lines during a run
// with a terminal go to the user's terminal in raw mode, where a bare \n
// would not return to the left margin.
type crlfWriter struct{ w io.Writer }

func (c crlfWriter) Write(p []byte) (int, error) {
	out := bytes.ReplaceAll(bytes.ReplaceAll(p, []byte("\r\n"), []byte("\n")), []byte("\n"), []byte("\r\n"))
	if _, err := c.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
