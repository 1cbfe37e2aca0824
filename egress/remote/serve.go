package remote

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/airlockhq/airlock/egress"
	"github.com/airlockhq/airlock/profile"
)

// ServeControl is the gateway's side of the control socket ctl: it
// receives the settings and the TAP device, starts the gateway with srv
// (egress.InProcess, the netstack's, in the gateway program), answers
// the supervisor's checks and sends the denials, and returns once the supervisor said close (nil) or went away (an error),
// with the gateway stopped either way. base gives what the settings do
// not carry (tests set a Resolver and a Dialer; the program, nothing).
func ServeControl(ctl *os.File, base egress.Config, srv egress.Server) error {
	c, err := newConn(ctl)
	if err != nil {
		return err
	}
	defer c.close()
	m, tapFD, err := c.recv()
	if errors.Is(err, errEOF) {
		return nil // a process warmed for a run that did not start
	}
	if err != nil {
		return fmt.Errorf("egress gateway: before serving: %w", err)
	}
	if m.Op != opServe || tapFD < 0 {
		closeFD(tapFD)
		c.send(message{Op: opFailed, Error: "egress gateway: the first message must be serve, with the TAP device"}, -1)
		return errors.New("egress gateway: no serve message")
	}
	tap := os.NewFile(uintptr(tapFD), "tap")
	pol, err := egress.Compile(profile.NetworkSpec{Mode: m.Mode, Allow: m.Allow, Deny: m.Deny})
	if err != nil {
		tap.Close()
		c.send(message{Op: opFailed, Error: err.Error()}, -1)
		return err
	}
	var sendMu sync.Mutex
	sendLocked := func(m message) error {
		sendMu.Lock()
		defer sendMu.Unlock()
		return c.send(m, -1)
	}
	cfg := base
	cfg.Policy = pol
	cfg.LookupTimeout = time.Duration(m.LookupTimeout)
	cfg.OnDenial = func(d egress.Denial) { sendLocked(message{Op: opDenial, Denial: &d}) }
	gw, err := srv.Serve(tap, cfg)
	if err != nil {
		sendLocked(message{Op: opFailed, Error: err.Error()})
		return err
	}
	if err := sendLocked(message{Op: opReady}); err != nil {
		gw.Close()
		return err
	}
	var ended error
	for {
		m, fd, err := c.recv()
		closeFD(fd)
		if err != nil {
			ended = fmt.Errorf("egress gateway: the supervisor went away: %w", err)
			break
		}
		if m.Op == opClose {
			break
		}
		if m.Op != opCheck {
			continue
		}
		ok := false
		if dst, perr := netip.ParseAddr(m.Addr); perr == nil {
			if m.Record {
				ok = gw.CheckTCP(dst, m.Port)
			} else {
				ok = gw.PermitsTCP(dst, m.Port)
			}
		}
		// A refusal CheckTCP recorded was sent, by OnDenial, before this.
		if err := sendLocked(message{Op: opVerdict, OK: ok}); err != nil {
			ended = err
			break
		}
	}
	if ended != nil {
		gw.Close()
		return ended
	}
	// A gateway that can stop before it closes its TAP device answers
	// first: the device's removal is the kernel's slow part, and nothing
	// the supervisor waits for.
	var closeErr error
	s, stops := gw.(egress.Stopper)
	if stops {
		s.Stop()
	} else {
		closeErr = gw.Close()
	}
	_, dropped := gw.Denials()
	last := message{Op: opClosed, Dropped: dropped}
	if closeErr != nil {
		last.Error = closeErr.Error()
	}
	err = sendLocked(last)
	if stops {
		gw.Close()
	}
	return err
}
