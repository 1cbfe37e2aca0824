package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/airlockhq/airlock/egress"
	"github.com/airlockhq/airlock/internal/visible"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox/internal/guard"
	"github.com/airlockhq/airlock/sandbox/internal/linux"
)

// The egress layer's part of a run: the sandbox gets its own network
// namespace holding a TAP device, which the helper creates and hands to
// the supervisor; the supervisor serves it with an egress.Gateway for the
// length of the run, from the Executor's egress.Server: the one
// Options.Gateway names (airlock's CLI: a gateway process, egress/remote)
// or the one in this process (egress/netstack, registered by importing
// it).

// maxDenialLines caps the "blocked ..." lines one run writes to stderr;
// the Result keeps more.
const maxDenialLines = 100

// usesGateway reports whether runs of a profile with this network spec
// get their own network namespace served by the egress gateway: always
// for an allowlist; for mode "all" when the host has a TUN device (else
// New refuses the profile: it would share the host's network).
func usesGateway(n profile.NetworkSpec, h HostInfo) bool {
	switch n.Mode {
	case profile.NetworkModeAllow:
		return true
	case profile.NetworkModeAll:
		return h.Tun
	}
	return false
}

// planEgress adds the network to a compiled plan: loopback, the TAP
// device and its addresses, and an /etc/resolv.conf naming the gateway.
func planEgress(pl *plan) {
	pl.config.LoopbackUp = true
	pl.config.Network = &linux.NetworkConfig{
		Tap:        egress.TapName,
		MTU:        egress.MTU,
		MAC:        egress.SandboxMAC,
		GatewayMAC: egress.GatewayMAC,
		Addrs:      []string{egress.SandboxIPv4 + "/32", egress.SandboxIPv6 + "/128"},
		Gateways:   []string{egress.GatewayIPv4, egress.GatewayIPv6},
	}
	pl.config.Mounts = append(pl.config.Mounts, linux.Mount{
		Kind:    linux.MountFile,
		Target:  resolvConfPath(),
		Content: "# airlock: the egress gateway is the only resolver\nnameserver " + egress.GatewayIPv4 + "\n",
		// A host without /etc/resolv.conf gets none (its parent is a
		// read-only bind): resolvers then ask 127.0.0.1, which answers
		// nothing in the sandbox, so lookups fail closed.
		Optional: true,
	})
}

// resolvConfPath is where resolvers read /etc/resolv.conf from: the end
// of its symlink chain on the host (systemd-resolved's stub file, say),
// since the mount view mirrors the host's layout.
func resolvConfPath() string {
	if p, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && filepath.IsAbs(p) {
		return p
	}
	return "/etc/resolv.conf"
}

// errHelperGone: the helper ended before handing over the TAP device; its
// own message on the error pipe says why.
var errHelperGone error = guard.HelperGone("the TAP device")

// startGateway receives the TAP device from the helper, serves it, and
// tells the helper to go on.
func (p *Process) startGateway(h *guard.Handoff) error {
	tap, err := receiveTAP(h.Parent)
	if err != nil {
		return err
	}
	gw, err := p.e.gateway.Serve(tap, egress.Config{
		Policy:   p.e.policy,
		Resolver: p.e.opts.Resolver,
		Dialer:   p.e.opts.Dialer,
		OnDenial: p.noteDenial,
	})
	if err != nil {
		return err
	}
	p.gwMu.Lock()
	p.gw = gw
	p.gwMu.Unlock()
	if _, err := h.Parent.Write([]byte{1}); err != nil {
		return fmt.Errorf("tell the helper the gateway serves: %w", err)
	}
	return nil
}

func receiveTAP(sock *os.File) (*os.File, error) {
	fd, ok, closed, err := guard.RecvOneRight(sock)
	switch {
	case err != nil:
		return nil, fmt.Errorf("receive the TAP device: %w", err)
	case closed:
		return nil, errHelperGone
	case !ok:
		return nil, errors.New("receive the TAP device: no descriptor")
	}
	return os.NewFile(uintptr(fd), "tap"), nil
}

// noteDenial writes the one line an agent reads on the run's stderr as
// the refusal happens; the Result lists it again when the run ends.
func (p *Process) noteDenial(d egress.Denial) {
	p.noteLine("airlock: " + d.String() + "\n")
}

// noteRefusal is noteDenial for the sandbox's own refusals (a masked
// path read, an exec outside the exec paths, a late deny match). The
// target is a name the command chose: escaped, a newline in it cannot
// forge a line.
func (p *Process) noteRefusal(d Denial) {
	p.noteLine(fmt.Sprintf("airlock: %s: %s (%s)\n", visible.Text(d.Kind), visible.Text(d.Reason), visible.Text(d.Target)))
}

// noteLine writes one refusal line on the run's stderr, up to
// maxDenialLines for the run, then one that says more followed.
func (p *Process) noteLine(line string) {
	n, w := p.denialLines.Add(1), p.stderr
	if w == nil || n > maxDenialLines+1 {
		return
	}
	if n == maxDenialLines+1 {
		line = "airlock: more refusals (connections, reads, execs) not shown; the run's report lists them\n"
	}
	io.WriteString(w, line)
}

// closeGateway stops the connect broker, ends every connection of the
// run, stops the gateway and returns their denials. Safe to call more
// than once.
func (p *Process) closeGateway() []Denial {
	p.gwMu.Lock()
	gw := p.gw
	p.gw = nil
	p.gwMu.Unlock()
	var out []Denial
	if gw == nil {
		return out
	}
	// Stopped, the gateway passes nothing and its denials are final; the
	// TAP device's slow removal (egress.Stopper) is left to a goroutine
	// instead of the run's end.
	var failed error
	if s, ok := gw.(egress.Stopper); ok {
		s.Stop()
		go s.Close()
	} else {
		failed = gw.Close()
	}
	list, dropped := gw.Denials()
	for _, d := range list {
		out = append(out, Denial{Kind: "network", Protocol: d.Protocol, Target: d.Target(), Reason: d.Reason, Live: p.stderr != nil})
	}
	if dropped > 0 {
		out = append(out, Denial{Kind: "network", Target: "*", Reason: fmt.Sprintf("%d more distinct refusals, not listed", dropped), Live: p.stderr != nil})
	}
	if failed != nil {
		// The gateway failed during the run: the sandbox's network was
		// cut off from then on, and refusals after that are not listed.
		out = append(out, Denial{Kind: "network", Target: "*", Reason: failed.Error()})
	}
	return out
}

// lockedWriter serialises the output copier and the denial lines on one
// stream.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
