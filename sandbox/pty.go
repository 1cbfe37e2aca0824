package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/sandbox/internal/linux"
)

// Terminal asks for a terminal of the command's own (Cmd.Terminal): a
// pty made inside the sandbox, on its private devpts, whose slave is the
// command's stdin, stdout and stderr and its controlling terminal, with
// the command as its session leader. Job control, ^C, ^Z, line-buffered
// output and "tty" work as at a terminal. The supervisor holds the
// master: it copies Cmd.Stdin to it and its output to Cmd.Stdout,
// counted against the output budget like any output. The caller's own
// terminal never reaches the command, so nothing the command does to its
// terminal (modes, TIOCSTI, writes past the budget) touches the caller's.
// Putting the caller's terminal in raw mode, so that keys such as ^C
// reach the pty as bytes, is the caller's part.
type Terminal struct {
	// Rows and Cols are the initial window size; zero leaves the pty's
	// default. Process.Resize changes it during the run.
	Rows, Cols uint16
	// Suspend, when set, is called when the user types the suspend key
	// (^Z) for a command that cannot be stopped by it: the command
	// itself, not a job of a shell in the sandbox, which the kernel
	// would not stop (its process group is orphaned: the init's session
	// is another). The run is held until Suspend returns, then
	// continued: the init and the command's process group are stopped
	// (SIGSTOP, suspend.go), and a Kill or budget meanwhile still ends
	// the run. A terminal program suspends itself there. Nil: the key
	// goes to the pty as any other, and nothing stops.
	Suspend func()
}

// ptyState is the supervisor's end of a run's pty.
type ptyState struct {
	sock    *os.File // the socket the helper sends the master on
	master  *os.File
	suspend func() // Terminal.Suspend
	// init is the sandbox's init (hold); an os.Process signals it by
	// pidfd, never a pid reused after the run.
	init *os.Process
	// endR and endW are a pipe whose write end endInput closes: feed,
	// which owns endR, polls it with the caller's input and reads no
	// more of that once it is readable (the command's terminal is gone).
	endR, endW   int
	endInputOnce sync.Once
}

// preparePTY hands the helper the socket its master will come back on.
func (p *Process) preparePTY(cfg *linux.Config, c *exec.Cmd) error {
	t := p.cmd.Terminal
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return &SetupError{Step: "terminal", Err: fmt.Errorf("socketpair: %w", err)}
	}
	child := os.NewFile(uintptr(fds[1]), "pty socket")
	p.pty = &ptyState{sock: os.NewFile(uintptr(fds[0]), "pty socket"), suspend: t.Suspend, endR: -1, endW: -1}
	c.ExtraFiles = append(c.ExtraFiles, child)
	p.pipes = append(p.pipes, child)
	cfg.PTY = &linux.PTYConfig{FD: 2 + len(c.ExtraFiles), Rows: t.Rows, Cols: t.Cols}
	// The caller's stdin goes to the master, never to the helper.
	c.Stdin = nil
	return nil
}

// startPTY takes the master the helper sent before it ran the command
// and starts copying: its output against the budget, Cmd.Stdin into it.
func (p *Process) startPTY() error {
	sc, err := p.pty.sock.SyscallConn()
	if err != nil {
		return &SetupError{Step: "terminal", Err: err}
	}
	fd, rerr := -1, error(nil)
	if cerr := sc.Control(func(u uintptr) { fd, rerr = linux.ReceivePTY(int(u)) }); cerr != nil {
		rerr = cerr
	}
	p.pty.sock.Close()
	if rerr != nil {
		return &SetupError{Step: "terminal", Err: rerr}
	}
	// Non-blocking, so Go's poller serves it and a Close ends a read.
	_ = unix.SetNonblock(fd, true)
	p.live.Lock()
	p.pty.master = os.NewFile(uintptr(fd), "pty master")
	p.pty.init = p.child.Process
	p.live.Unlock()
	w := p.cmd.Stdout
	if w == nil {
		p.outs[0] = &bytes.Buffer{}
		w = p.outs[0]
	}
	p.gwMu.Lock()
	if p.broker != nil {
		p.broker.tty.Store(p.pty.master)
	}
	p.gwMu.Unlock()
	// The terminal carries stderr too: the hints watch it, their lines
	// ending as a raw terminal needs.
	p.ptyHints = p.newHints(w)
	p.ptyHints.crlf = true
	p.copiers.Add(1)
	go func() {
		p.copyOutput(ptyReader{p.pty.master}, p.ptyHints)
		// The master reads its end once no process holds the terminal:
		// what the user types next is for whoever reads their terminal
		// after airlock (their shell), not for a pty nobody reads.
		p.pty.endInput()
	}()
	if in := p.cmd.Stdin; in != nil {
		if _, ok := in.(*os.File); ok {
			var end [2]int
			if err := unix.Pipe2(end[:], unix.O_CLOEXEC); err != nil {
				return &SetupError{Step: "terminal", Err: fmt.Errorf("pipe: %w", err)}
			}
			p.pty.endR, p.pty.endW = end[0], end[1]
		}
		go p.pty.feed(in)
	}
	return nil
}

// endInput stops feed before its next read of the caller's input.
func (s *ptyState) endInput() {
	s.endInputOnce.Do(func() {
		if s.endW >= 0 {
			unix.Close(s.endW)
		}
	})
}

// waitInput waits until f has input to read (or its end, or an error,
// which the read then returns) and reports true, or false once endInput
// was called.
func (s *ptyState) waitInput(f *os.File) bool {
	sc, err := f.SyscallConn()
	if err != nil {
		return true
	}
	in := -1
	_ = sc.Control(func(u uintptr) { in = int(u) })
	fds := []unix.PollFd{{Fd: int32(in), Events: unix.POLLIN}, {Fd: int32(s.endR), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return true
		case fds[1].Revents != 0:
			return false
		case fds[0].Revents != 0:
			return true
		}
	}
}

// feed copies in to the master. At the end of in (a pipe, with --tty
// in a pipeline) the terminal's EOF key follows, once after a complete
// line and twice after a partial one, so the command reads its end as it
// would from a pipe. An in that is a file (the user's terminal) is read
// only once it has input and while the command's terminal is there
// (endInput): a read blocked on it past the command's end would take
// the next line the user types, meant for their shell, and lose it.
func (s *ptyState) feed(in io.Reader) {
	f, _ := in.(*os.File)
	if f != nil {
		defer unix.Close(s.endR)
	}
	buf := make([]byte, 32<<10)
	last := byte('\n')
	for {
		if f != nil && !s.waitInput(f) {
			return
		}
		n, err := in.Read(buf)
		if n > 0 {
			if werr := s.write(buf[:n]); werr != nil {
				return
			}
			last = buf[n-1]
		}
		if err == io.EOF {
			eof := []byte{4}
			if last != '\n' {
				eof = []byte{4, 4}
			}
			_, _ = s.master.Write(eof)
			return
		}
		if err != nil {
			return
		}
	}
}

// ptyReader ends at EIO, what a master reads once every slave is closed
// (the command and everything it started are gone).
type ptyReader struct{ f *os.File }

func (r ptyReader) Read(b []byte) (int, error) {
	n, err := r.f.Read(b)
	if errors.Is(err, unix.EIO) {
		err = io.EOF
	}
	return n, err
}

func (r ptyReader) Close() error { return nil }

// Resize sets the window size of the command's terminal; the kernel
// signals SIGWINCH to its foreground job. A run without Cmd.Terminal
// has none to resize.
func (p *Process) Resize(rows, cols uint16) error {
	p.live.Lock()
	defer p.live.Unlock()
	if p.pty == nil || p.pty.master == nil {
		return errors.New("sandbox: Resize of a run without a terminal (Cmd.Terminal)")
	}
	sc, err := p.pty.master.SyscallConn()
	if err != nil {
		return err
	}
	var ierr error
	if err := sc.Control(func(u uintptr) {
		ierr = unix.IoctlSetWinsize(int(u), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols})
	}); err != nil {
		return err
	}
	return ierr
}

// closePTY releases the master once the output is copied.
func (p *Process) closePTY() {
	if p.pty == nil {
		return
	}
	p.pty.endInput()
	p.pty.sock.Close()
	if p.pty.master != nil {
		p.pty.master.Close()
	}
}

// controllingTTY opens, for a stopped open of /dev/tty (with O_CREAT, as
// a shell's "> /dev/tty" does), the run's pty, when that is the caller's
// controlling terminal. The create guard's proxy carries out such opens
// as a process of its own, and /dev/tty names the opener's controlling
// terminal: the proxy has none and gets ENXIO. The slave comes from the
// master (TIOCGPTPEER), never from a path. -1: not this case.
func (b *connectBroker) controllingTTY(n *seccompNotif, req *linux.GuardRequest) int {
	master := b.tty.Load()
	if master == nil || req.Op != linux.GuardOpen || string(req.Path1) != "/dev/tty" {
		return -1
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", n.pid))
	if err != nil {
		return -1
	}
	// Field 7, tty_nr, counted after the command name's ")".
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(f) < 5 {
		return -1
	}
	nr, err := strconv.ParseUint(f[4], 10, 32)
	if err != nil || nr == 0 {
		return -1
	}
	major, minor := uint32(nr&0xfff00)>>8, uint32(nr&0xff)|uint32(nr>>12)&0xfff00
	sc, err := master.SyscallConn()
	if err != nil {
		return -1
	}
	slave := -1
	flags := req.Flags&(unix.O_ACCMODE|unix.O_NONBLOCK) | unix.O_NOCTTY | unix.O_CLOEXEC
	_ = sc.Control(func(u uintptr) {
		r, _, errno := unix.Syscall(unix.SYS_IOCTL, u, unix.TIOCGPTPEER, uintptr(flags))
		if errno == 0 {
			slave = int(r)
		}
	})
	if slave < 0 {
		return -1
	}
	var st unix.Stat_t
	if unix.Fstat(slave, &st) != nil || unix.Major(st.Rdev) != major || unix.Minor(st.Rdev) != minor || !b.valid(n) {
		unix.Close(slave)
		return -1
	}
	return slave
}
