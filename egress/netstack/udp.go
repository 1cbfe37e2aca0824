package netstack

import (
	"errors"
	"github.com/airlockhq/airlock/egress"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
	"gvisor.dev/gvisor/pkg/tcpip/transport/udp"
	"gvisor.dev/gvisor/pkg/waiter"
)

// The limits of relayed UDP. They are variables only so that tests can
// shorten them (export_test.go); nothing else changes them.
var (
	// udpIdle ends a relayed flow that has carried nothing, either way,
	// for this long.
	udpIdle = 60 * time.Second
	// maxUDPFlows bounds the flows one gateway relays at once. Each holds
	// a socket of the supervisor's and two datagram buffers, and a program
	// that sends from a new port each time would otherwise open one per
	// datagram for a minute each; at the bound, the flow idle longest
	// gives way to the new one.
	maxUDPFlows = 512
)

// maxDatagram is the largest UDP payload either side can send.
const maxDatagram = 65535

// udpRelay sees every datagram of the sandbox's that is not addressed to
// the gateway's DNS port and has no flow yet. Allowed ones start a flow:
// the sandbox's 4-tuple on one side, a UDP socket the supervisor dials to
// exactly the checked destination on the other, so answers come only
// from there. Refused ones become an egress.Denial, and the stack answers ICMP
// port unreachable, so a connected socket learns of the refusal.
type udpRelay struct {
	g *Gateway

	mu    sync.Mutex
	flows map[*udpFlow]struct{}
}

func newUDPRelay(g *Gateway) *udpRelay {
	return &udpRelay{g: g, flows: map[*udpFlow]struct{}{}}
}

// udpFlow is one sandbox address and port talking to one destination.
type udpFlow struct {
	in   *gonet.UDPConn // the sandbox's side, in the gateway's stack
	up   net.Conn       // the host's side; nil until dialled (udpRelay.mu)
	gone bool           // evicted or ended (udpRelay.mu)
	last atomic.Int64   // UnixNano of the last datagram either way
}

// handle is the stack's udp.ForwarderHandler. It runs on the stack's
// receive path, so the flow's work happens in a goroutine of its own.
func (u *udpRelay) handle(r *udp.ForwarderRequest) bool {
	g := u.g
	id := r.ID()
	dst := addrOf(id.LocalAddress)
	port := id.LocalPort
	names := g.namesOf(dst)
	var reason string
	if g.isGateway(dst) {
		reason = "the gateway serves only DNS on port 53"
	} else if ok, why := g.policy.DecideUDP(dst, port, names); !ok {
		reason = why
	}
	if reason != "" {
		host := dst.String()
		if len(names) > 0 {
			host = names[len(names)-1]
		}
		g.deny(egress.Denial{Protocol: egress.ProtoUDP, Host: host, Port: port, Reason: reason})
		return false
	}
	if !g.enter() {
		return false
	}
	var wq waiter.Queue
	ep, err := r.CreateEndpoint(&wq)
	if err != nil {
		g.wg.Done()
		return false
	}
	f := &udpFlow{in: gonet.NewUDPConn(&wq, ep)}
	f.touch()
	u.admit(f)
	go func() {
		defer g.wg.Done()
		u.run(f, netip.AddrPortFrom(dst, port))
	}()
	return true
}

// admit counts f among the flows, making room by ending the one idle
// longest when the gateway relays maxUDPFlows already.
func (u *udpRelay) admit(f *udpFlow) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for len(u.flows) >= maxUDPFlows {
		var oldest *udpFlow
		for o := range u.flows {
			if oldest == nil || o.last.Load() < oldest.last.Load() {
				oldest = o
			}
		}
		u.endLocked(oldest)
	}
	u.flows[f] = struct{}{}
}

// endLocked removes f and closes its sockets, which ends its goroutines.
func (u *udpRelay) endLocked(f *udpFlow) {
	delete(u.flows, f)
	f.gone = true
	f.in.Close()
	if f.up != nil {
		f.up.Close()
	}
}

// run dials dst for f and relays both ways until the flow ends: idle for
// udpIdle, evicted, an error on the sandbox's side, or the gateway's
// Close, which closes both sockets (they are tracked like a TCP
// connection's).
func (u *udpRelay) run(f *udpFlow, dst netip.AddrPort) {
	g := u.g
	up, err := g.dialer.DialContext(g.ctx, "udp", dst.String())
	u.mu.Lock()
	if err != nil || f.gone || !g.track(f.in, up) {
		if up != nil {
			up.Close()
		}
		u.endLocked(f)
		u.mu.Unlock()
		return
	}
	f.up = up
	u.mu.Unlock()

	done := make(chan struct{})
	g.wg.Add(1) // inside an entered section, so Close is still waiting
	go func() {
		defer g.wg.Done()
		defer close(done)
		f.copy(f.in, up, true)
	}()
	f.copy(up, f.in, false)
	<-done
	u.mu.Lock()
	u.endLocked(f)
	u.mu.Unlock()
	g.untrack(f.in, up)
}

func (f *udpFlow) touch() { f.last.Store(time.Now().UnixNano()) }

func (f *udpFlow) lastTime() time.Time { return time.Unix(0, f.last.Load()) }

// copy carries datagrams from src to dst until the flow has been idle
// both ways for udpIdle, or src or dst fails; then it closes both, so the
// other direction ends too. fromHost is true when src is the host's
// socket: a port unreachable from the destination is then only a lost
// datagram (as it would be for the sandbox), not the end of the flow.
func (f *udpFlow) copy(dst, src net.Conn, fromHost bool) {
	defer src.Close()
	defer dst.Close()
	buf := make([]byte, maxDatagram)
	// The deadline is moved when it passes, not for every datagram: a
	// busy flow sets one timer per udpIdle, not one per datagram.
	src.SetReadDeadline(f.lastTime().Add(udpIdle))
	for {
		n, err := src.Read(buf)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				if until := f.lastTime().Add(udpIdle); time.Now().Before(until) {
					src.SetReadDeadline(until)
					continue
				}
				return
			}
			if fromHost && errors.Is(err, syscall.ECONNREFUSED) {
				continue
			}
			return
		}
		f.touch()
		_, err = dst.Write(buf[:n])
		if err != nil && (fromHost || !errors.Is(err, syscall.ECONNREFUSED)) {
			return
		}
	}
}
