package remote

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/airlockhq/airlock/egress"
)

// closeTimeout bounds how long Close waits for the gateway to say it
// stopped before it kills the process.
const closeTimeout = 10 * time.Second

// Server is an egress.Server whose gateways each run in a process of
// their own: Path, started with the gateway's end of a control socket
// as descriptor 3 (the program calls ServeControl on it). Its zero value
// with Path set is ready to use; it is safe for concurrent use.
type Server struct {
	// Path is the gateway program (airlock-gateway).
	Path string

	mu    sync.Mutex
	spare *process // started by Warm, not yet taken
}

// process is one started gateway program, not yet serving.
type process struct {
	ready chan struct{} // closed once start has returned
	ctl   *os.File      // the supervisor's end of the control socket
	cmd   *exec.Cmd
	err   error
}

// Warm starts the next gateway's process now, in the background, so
// that its start overlaps the run's preparation; the next Serve takes
// it. Without a Warm, Serve starts one itself.
func (s *Server) Warm() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spare == nil {
		s.spare = s.launch()
	}
}

// Close ends a process Warm started that no Serve took.
func (s *Server) Close() {
	s.mu.Lock()
	p := s.spare
	s.spare = nil
	s.mu.Unlock()
	if p != nil {
		<-p.ready
		if p.err == nil {
			p.ctl.Close() // the gateway stops at its end's EOF
			p.cmd.Wait()
		}
	}
}

// launch starts the program in the background.
func (s *Server) launch() *process {
	p := &process{ready: make(chan struct{})}
	go func() {
		defer close(p.ready)
		p.err = p.start(s.Path)
	}()
	return p
}

func (p *process) start(path string) error {
	mine, theirs, err := socketPair()
	if err != nil {
		return err
	}
	defer theirs.Close()
	cmd := exec.Command(path)
	cmd.ExtraFiles = []*os.File{theirs}
	// Through a pipe, not the descriptor itself: the process outlives
	// Close by the TAP device's removal, and a caller that reads the
	// supervisor's stderr to its end must not wait for that.
	cmd.Stderr = struct{ io.Writer }{os.Stderr}
	// Its own process group: a terminal's ^C or ^Z is the supervisor's
	// to handle (it forwards them to the sandbox); the gateway ends when
	// the supervisor closes the control socket, or dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		mine.Close()
		return err
	}
	p.ctl, p.cmd = mine, cmd
	return nil
}

// Serve hands tap to a gateway process (the one Warm started, or a new
// one) and returns once it serves. cfg.Resolver and cfg.Dialer must be
// nil: they cannot cross to another process.
func (s *Server) Serve(tap *os.File, cfg egress.Config) (egress.Gateway, error) {
	if cfg.Resolver != nil || cfg.Dialer != nil {
		tap.Close()
		return nil, errors.New("egress gateway: a Resolver or Dialer of this process cannot be used by a gateway in another; use the in-process gateway (egress/netstack)")
	}
	s.mu.Lock()
	p := s.spare
	s.spare = nil
	s.mu.Unlock()
	if p == nil {
		p = s.launch()
	}
	<-p.ready
	if p.err != nil {
		tap.Close()
		return nil, fmt.Errorf("egress gateway: start %s: %w", s.Path, p.err)
	}
	g, err := start(p.ctl, tap, cfg, p.cmd)
	if err != nil {
		return nil, err
	}
	return g, nil
}

// Gateway is a gateway served in another process, as its supervisor
// holds it: an egress.Gateway.
type Gateway struct {
	c        *conn
	cmd      *exec.Cmd // nil: the far end is no process of ours (tests)
	onDenial func(egress.Denial)

	checkMu sync.Mutex // one check in flight: verdicts come in order
	verdict chan bool
	done    chan struct{} // the reader stopped: closed, or the gateway gone

	mu      sync.Mutex
	denials []egress.Denial
	closed  *message // the gateway's last message, once read
	readErr error    // why the reader stopped, when not at closed

	once sync.Once
	err  error
}

// Start serves tap with the gateway at the far end of ctl, which runs
// ServeControl; cmd, if not nil, is its process, which Close waits for.
// Start takes ownership of ctl and tap, also when it fails.
func Start(ctl *os.File, tap *os.File, cfg egress.Config) (*Gateway, error) {
	return start(ctl, tap, cfg, nil)
}

func start(ctl, tap *os.File, cfg egress.Config, cmd *exec.Cmd) (*Gateway, error) {
	fail := func(err error) (*Gateway, error) {
		if cmd != nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		return nil, err
	}
	if cfg.Policy == nil {
		ctl.Close()
		tap.Close()
		return fail(errors.New("egress gateway: Config.Policy is nil"))
	}
	c, err := newConn(ctl)
	if err != nil {
		tap.Close()
		return fail(err)
	}
	spec := cfg.Policy.Spec()
	err = c.send(message{Op: opServe, Mode: spec.Mode, Allow: spec.Allow, Deny: spec.Deny, LookupTimeout: int64(cfg.LookupTimeout)}, int(tap.Fd()))
	tap.Close()
	if err != nil {
		c.close()
		return fail(fmt.Errorf("egress gateway: send the TAP device: %w%s", err, exited(cmd)))
	}
	m, _, err := c.recv()
	switch {
	case err != nil:
		c.close()
		return fail(fmt.Errorf("egress gateway: %w%s", err, exited(cmd)))
	case m.Op == opFailed:
		c.close()
		return fail(errors.New(m.Error))
	case m.Op != opReady:
		c.close()
		return fail(fmt.Errorf("egress gateway: %q before ready", m.Op))
	}
	g := &Gateway{c: c, cmd: cmd, onDenial: cfg.OnDenial, verdict: make(chan bool, 1), done: make(chan struct{})}
	go g.read()
	return g, nil
}

// exited waits for cmd, whose control socket failed, and says how it
// ended.
func exited(cmd *exec.Cmd) string {
	if cmd == nil {
		return ""
	}
	cmd.Process.Kill()
	if err := cmd.Wait(); err != nil {
		return " (the gateway process: " + err.Error() + ")"
	}
	return ""
}

// read receives the gateway's messages until closed or EOF.
func (g *Gateway) read() {
	defer close(g.done)
	for {
		m, fd, err := g.c.recv()
		closeFD(fd)
		if err != nil {
			g.mu.Lock()
			g.readErr = err
			g.mu.Unlock()
			return
		}
		switch m.Op {
		case opDenial:
			if m.Denial == nil {
				continue
			}
			g.mu.Lock()
			g.denials = append(g.denials, *m.Denial)
			g.mu.Unlock()
			if g.onDenial != nil {
				g.onDenial(*m.Denial)
			}
		case opVerdict:
			select {
			case g.verdict <- m.OK:
			default: // no check waits: cannot happen with one in flight
			}
		case opClosed:
			g.mu.Lock()
			g.closed = &m
			g.mu.Unlock()
			return
		}
	}
}

// PermitsTCP asks the gateway; false when it is gone.
func (g *Gateway) PermitsTCP(dst netip.Addr, port uint16) bool { return g.check(dst, port, false) }

// CheckTCP asks the gateway, which records a refusal; false when it is
// gone.
func (g *Gateway) CheckTCP(dst netip.Addr, port uint16) bool { return g.check(dst, port, true) }

func (g *Gateway) check(dst netip.Addr, port uint16, record bool) bool {
	g.checkMu.Lock()
	defer g.checkMu.Unlock()
	select {
	case <-g.done:
		return false
	default:
	}
	if err := g.c.send(message{Op: opCheck, Addr: dst.String(), Port: port, Record: record}, -1); err != nil {
		return false
	}
	select {
	case ok := <-g.verdict:
		return ok
	case <-g.done:
		return false
	}
}

// Denials returns the refusals the gateway sent, and, once closed, how
// many more it did not keep.
func (g *Gateway) Denials() ([]egress.Denial, int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	dropped := 0
	if g.closed != nil {
		dropped = g.closed.Dropped
	}
	return append([]egress.Denial(nil), g.denials...), dropped
}

// Close stops the gateway and returns once it said it stopped (its
// denials final, nothing passes any more); its process then removes the
// TAP device and exits on its own, reaped in the background. The error
// says the gateway failed or ended before it was told to: the sandbox's
// network was cut off from then on.
func (g *Gateway) Close() error {
	g.once.Do(func() {
		sent := g.c.send(message{Op: opClose}, -1)
		timer := time.NewTimer(closeTimeout)
		select {
		case <-g.done:
		case <-timer.C:
			if g.cmd != nil {
				g.cmd.Process.Kill()
			}
			g.c.close()
			<-g.done
		}
		timer.Stop()
		g.c.close()
		g.mu.Lock()
		closed, readErr := g.closed, g.readErr
		g.mu.Unlock()
		var waitErr error
		if g.cmd != nil && closed != nil {
			// It has stopped and said so; it exits once the kernel has
			// removed the TAP device, which nothing here waits for.
			go g.cmd.Wait()
		} else if g.cmd != nil {
			waitErr = g.cmd.Wait()
		}
		switch {
		case closed == nil:
			why := readErr
			if waitErr != nil {
				why = waitErr
			} else if sent != nil && why == nil {
				why = sent
			}
			g.err = fmt.Errorf("the egress gateway ended during the run (%v): the sandbox's network was cut off from then on, and refusals after that are not listed", why)
		case closed.Error != "":
			g.err = errors.New("the egress gateway: " + closed.Error)
		}
	})
	return g.err
}
