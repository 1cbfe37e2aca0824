package egress

import (
	"net"
	"net/netip"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
	"gvisor.dev/gvisor/pkg/tcpip/transport/udp"
	"gvisor.dev/gvisor/pkg/waiter"
)

// udpIdle ends a forwarded UDP flow when a direction has carried nothing
// for this long.
const udpIdle = 60 * time.Second

// handleUDP sees every datagram not addressed to the gateway's DNS port.
// With an allowlist none is forwarded: entries are TCP, and DNS goes to
// the gateway. With network "all", a flow to a public address (or an
// allowed literal) is relayed through a UDP socket of the supervisor's.
// Returning false makes the stack answer ICMP port unreachable, so a
// connected socket learns of the refusal.
func (g *Gateway) handleUDP(r *udp.ForwarderRequest) bool {
	id := r.ID()
	dst := addrOf(id.LocalAddress)
	port := id.LocalPort
	var reason string
	switch {
	case g.isGateway(dst):
		reason = "the gateway serves only DNS on port 53"
	case !g.policy.public:
		reason = "UDP other than DNS to the gateway is not forwarded"
	default:
		if ok, why := g.policy.Decide(dst, port, nil); !ok {
			reason = why
		}
	}
	if reason != "" {
		host := dst.String()
		if names := g.namesOf(dst); len(names) > 0 {
			host = names[len(names)-1]
		}
		g.deny(Denial{Protocol: ProtoUDP, Host: host, Port: port, Reason: reason})
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
	go func() {
		defer g.wg.Done()
		g.relayUDP(gonet.NewUDPConn(&wq, ep), netip.AddrPortFrom(dst, port))
	}()
	return true
}

// relayUDP carries one flow between the sandbox and dst.
func (g *Gateway) relayUDP(in *gonet.UDPConn, dst netip.AddrPort) {
	up, err := g.dialer.DialContext(g.ctx, "udp", dst.String())
	if err != nil {
		in.Close()
		return
	}
	if !g.track(in, up) {
		in.Close()
		up.Close()
		return
	}
	defer g.untrack(in, up)
	done := make(chan struct{})
	g.wg.Add(1) // inside an entered section, so Close is still waiting
	go func() {
		defer g.wg.Done()
		defer close(done)
		relayDatagrams(up, in)
	}()
	relayDatagrams(in, up)
	<-done
}

// relayDatagrams copies datagrams from src to dst until either side fails
// or src is idle for udpIdle; then it closes both.
func relayDatagrams(dst, src net.Conn) {
	defer src.Close()
	defer dst.Close()
	buf := make([]byte, 65535)
	for {
		src.SetReadDeadline(time.Now().Add(udpIdle))
		n, err := src.Read(buf)
		if err != nil {
			return
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			return
		}
	}
}
