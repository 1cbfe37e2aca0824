package netstack

import (
	"context"
	"errors"
	"fmt"
	"github.com/airlockhq/airlock/egress"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/link/fdbased"
	"gvisor.dev/gvisor/pkg/tcpip/network/arp"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv6"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
	"gvisor.dev/gvisor/pkg/tcpip/transport/udp"
	"gvisor.dev/gvisor/pkg/waiter"
)

// Limits of one gateway.
const (
	// answerTTL is the TTL of the DNS answers; the gateway remembers the
	// addresses for the whole run regardless.
	answerTTL = 60
	// maxLookups bounds concurrent DNS lookups of one run.
	maxLookups = 64
	// spliceBuffer is the size of each copy buffer of a connection, and
	// pipeBuffers how many each direction fills ahead of its writer.
	spliceBuffer = 128 << 10
	pipeBuffers  = 3
)

const nicID tcpip.NICID = 1

// Gateway serves one sandbox's TAP device. Build it with Serve; Close
// ends every connection and stops everything it started.
type Gateway struct {
	policy   *egress.Policy
	resolver *net.Resolver
	dialer   *net.Dialer
	lookupTO time.Duration
	denials  denialLog

	fd     int
	stack  *stack.Stack
	gw4    netip.Addr
	gw6    netip.Addr
	ctx    context.Context
	cancel context.CancelFunc
	lookup chan struct{} // semaphore of concurrent lookups

	fdOnce sync.Once // Close's close of fd

	mu       sync.Mutex
	closed   bool
	wg       sync.WaitGroup
	conns    map[net.Conn]struct{}
	servers  []interface{ Close() error }
	resolved map[netip.Addr][]string // address → allowed names it was the answer for
}

// Serve starts a Gateway on tap, a TAP device (IFF_TAP|IFF_NO_PI) whose
// other side is the sandbox's egress.TapName configured with
// egress.SandboxIPv4 and egress.SandboxIPv6. Serve takes ownership of
// tap: Close closes it, and so does a failed Serve.
func Serve(tap *os.File, cfg egress.Config) (*Gateway, error) {
	if tap == nil {
		return nil, errors.New("egress: nil TAP device")
	}
	if cfg.Policy == nil {
		tap.Close()
		return nil, errors.New("egress: Config.Policy is nil")
	}
	// fdbased wants a raw descriptor it can make non-blocking; a dup
	// leaves no *os.File whose finalizer could close it under the stack.
	fd, err := unix.FcntlInt(tap.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	tap.Close()
	if err != nil {
		return nil, fmt.Errorf("egress: dup TAP descriptor: %w", err)
	}
	g := &Gateway{
		policy:   cfg.Policy,
		resolver: cfg.Resolver,
		dialer:   cfg.Dialer,
		lookupTO: cfg.LookupTimeout,
		denials:  denialLog{notify: cfg.OnDenial},
		fd:       fd,
		gw4:      netip.MustParseAddr(egress.GatewayIPv4),
		gw6:      netip.MustParseAddr(egress.GatewayIPv6),
		lookup:   make(chan struct{}, maxLookups),
		conns:    map[net.Conn]struct{}{},
		resolved: map[netip.Addr][]string{},
	}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	if g.dialer == nil {
		g.dialer = &net.Dialer{Timeout: egress.DefaultDialTimeout}
	}
	if g.lookupTO == 0 {
		g.lookupTO = egress.DefaultLookupTimeout
	}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	g.pinDenied()
	if err := g.start(); err != nil {
		g.Close()
		return nil, err
	}
	return g, nil
}

// start builds the stack on the TAP and starts the DNS servers.
func (g *Gateway) start() error {
	mac, err := tcpip.ParseMACAddress(egress.GatewayMAC)
	if err != nil {
		return err
	}
	sandboxMAC, err := tcpip.ParseMACAddress(egress.SandboxMAC)
	if err != nil {
		return err
	}
	link, err := fdbased.New(&fdbased.Options{
		FDs:            []int{g.fd},
		MTU:            egress.MTU,
		EthernetHeader: true,
		Address:        mac,
		// The sandbox's kernel checksums what it sends; verifying again
		// costs throughput and protects nothing (a bad checksum only
		// corrupts the sandbox's own connection).
		RXChecksumOffload: true,
	})
	if err != nil {
		return fmt.Errorf("egress: TAP link: %w", err)
	}
	s := stack.New(stack.Options{
		NetworkProtocols: []stack.NetworkProtocolFactory{
			ipv4.NewProtocol,
			ipv6.NewProtocolWithOptions(ipv6.Options{
				// No duplicate address detection: the link has exactly two
				// ends, and DAD would hold the gateway's address for a
				// second.
				DADConfigs: stack.DADConfigurations{DupAddrDetectTransmits: 0, RetransmitTimer: time.Second},
			}),
			arp.NewProtocol,
		},
		TransportProtocols: []stack.TransportProtocolFactory{tcp.NewProtocol, udp.NewProtocol},
	})
	g.stack = s
	for _, opt := range []tcpip.SettableTransportProtocolOption{
		new(tcpip.TCPSACKEnabled(true)),
		new(tcpip.TCPModerateReceiveBufferOption(true)),
		&tcpip.TCPReceiveBufferSizeRangeOption{Min: 4 << 10, Default: 1 << 20, Max: 8 << 20},
		&tcpip.TCPSendBufferSizeRangeOption{Min: 4 << 10, Default: 1 << 20, Max: 8 << 20},
	} {
		if err := s.SetTransportProtocolOption(tcp.ProtocolNumber, opt); err != nil {
			return fmt.Errorf("egress: tcp option %T: %s", opt, err)
		}
	}
	// The forwarders are in place before the NIC delivers its first
	// packet: the stack reads its handlers without a lock.
	tcpFwd := tcp.NewForwarder(s, 0, 1024, g.handleTCP)
	s.SetTransportProtocolHandler(tcp.ProtocolNumber, tcpFwd.HandlePacket)
	udpFwd := udp.NewForwarder(s, newUDPRelay(g).handle)
	s.SetTransportProtocolHandler(udp.ProtocolNumber, udpFwd.HandlePacket)
	if err := s.CreateNIC(nicID, newICMPFilter(link, g)); err != nil {
		return fmt.Errorf("egress: create NIC: %s", err)
	}
	for _, a := range []tcpip.ProtocolAddress{
		{Protocol: ipv4.ProtocolNumber, AddressWithPrefix: tcpip.AddrFrom4(g.gw4.As4()).WithPrefix()},
		{Protocol: ipv6.ProtocolNumber, AddressWithPrefix: tcpip.AddrFrom16(g.gw6.As16()).WithPrefix()},
	} {
		if err := s.AddProtocolAddress(nicID, a, stack.AddressProperties{}); err != nil {
			return fmt.Errorf("egress: gateway address %s: %s", a.AddressWithPrefix, err)
		}
	}
	for _, n := range []struct {
		proto tcpip.NetworkProtocolNumber
		addr  tcpip.Address
	}{
		{ipv4.ProtocolNumber, tcpip.AddrFrom4(netip.MustParseAddr(egress.SandboxIPv4).As4())},
		{ipv6.ProtocolNumber, tcpip.AddrFrom16(netip.MustParseAddr(egress.SandboxIPv6).As16())},
	} {
		if err := s.AddStaticNeighbor(nicID, n.proto, n.addr, sandboxMAC); err != nil {
			return fmt.Errorf("egress: neighbour %s: %s", n.addr, err)
		}
	}
	// Promiscuous: every destination arrives here, to be decided on.
	// Spoofing: the answers go out from the address the sandbox dialled.
	if err := s.SetPromiscuousMode(nicID, true); err != nil {
		return fmt.Errorf("egress: promiscuous mode: %s", err)
	}
	if err := s.SetSpoofing(nicID, true); err != nil {
		return fmt.Errorf("egress: spoofing: %s", err)
	}
	s.SetRouteTable([]tcpip.Route{
		{Destination: header.IPv4EmptySubnet, NIC: nicID},
		{Destination: header.IPv6EmptySubnet, NIC: nicID},
	})

	// The DNS servers are ordinary endpoints bound to the gateway's
	// addresses; everything else falls through to the forwarders.
	for _, gw := range []struct {
		addr  tcpip.Address
		proto tcpip.NetworkProtocolNumber
	}{
		{tcpip.AddrFrom4(g.gw4.As4()), ipv4.ProtocolNumber},
		{tcpip.AddrFrom16(g.gw6.As16()), ipv6.ProtocolNumber},
	} {
		local := tcpip.FullAddress{NIC: nicID, Addr: gw.addr, Port: egress.DNSPort}
		uc, err := gonet.DialUDP(s, &local, nil, gw.proto)
		if err != nil {
			return fmt.Errorf("egress: DNS on %s:53/udp: %w", gw.addr, err)
		}
		g.servers = append(g.servers, uc)
		tl, err := gonet.ListenTCP(s, local, gw.proto)
		if err != nil {
			return fmt.Errorf("egress: DNS on %s:53/tcp: %w", gw.addr, err)
		}
		g.servers = append(g.servers, tl)
		g.wg.Add(2)
		go g.serveDNSUDP(uc)
		go g.serveDNSTCP(tl)
	}
	return nil
}

// Denials returns the distinct refusals so far, in order, and how many
// more were not kept (beyond a thousand distinct ones).
func (g *Gateway) Denials() ([]egress.Denial, int) { return g.denials.snapshot() }

// Close stops the Gateway (Stop) and closes the TAP device. It is safe
// to call more than once.
func (g *Gateway) Close() error {
	g.Stop()
	var err error
	g.fdOnce.Do(func() { err = unix.Close(g.fd) })
	return err
}

// Stop tears down every connection, stops the DNS servers and the stack,
// and waits for every goroutine the Gateway started: nothing reaches the
// sandbox or the host after it, and Denials is final. It leaves the TAP
// device open for Close, whose close of the last descriptor removes the
// device, which waits for the kernel's RCU grace periods (about 20 ms
// here): a gateway in its own process answers its supervisor first
// (egress/remote). It is safe to call more than once.
func (g *Gateway) Stop() {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return
	}
	g.closed = true
	servers := g.servers
	conns := make([]net.Conn, 0, len(g.conns))
	for c := range g.conns {
		conns = append(conns, c)
	}
	g.mu.Unlock()

	g.cancel()
	for _, s := range servers {
		s.Close()
	}
	for _, c := range conns {
		c.Close()
	}
	// Aborting every endpoint also ends handshakes still waiting for the
	// sandbox's ACK, so no handler outlives this call.
	if g.stack != nil {
		g.stack.Close()
	}
	g.wg.Wait()
	if g.stack != nil {
		g.stack.Wait()
	}
}

// isClosed: a closed gateway permits nothing, as one in another process
// that has stopped (egress/remote).
func (g *Gateway) isClosed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closed
}

// enter registers a goroutine that works for the gateway; false once the
// gateway is closing.
func (g *Gateway) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.wg.Add(1)
	return true
}

func (g *Gateway) deny(d egress.Denial) { g.denials.add(d) }

func (g *Gateway) isGateway(a netip.Addr) bool { return a == g.gw4 || a == g.gw6 }

// namesOf returns the allowed names the gateway answered with a.
func (g *Gateway) namesOf(a netip.Addr) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.resolved[a]...)
}

// remember records that the gateway answered name with addrs.
func (g *Gateway) remember(name string, addrs []netip.Addr) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, a := range addrs {
		names := g.resolved[a]
		found := false
		for _, n := range names {
			found = found || n == name
		}
		if !found {
			g.resolved[a] = append(names, name)
		}
	}
}

// handleTCP decides one connection attempt of the sandbox. It runs in
// its own goroutine (the forwarder starts one per SYN) and, for an
// allowed connection, carries it until it ends.
func (g *Gateway) handleTCP(r *tcp.ForwarderRequest) {
	if !g.enter() {
		r.Complete(true)
		return
	}
	defer g.wg.Done()
	id := r.ID()
	dst := addrOf(id.LocalAddress)
	port := id.LocalPort
	if ok, d := g.decideTCP(dst, port); !ok {
		g.deny(d)
		r.Complete(true)
		return
	}
	// The host side first: if the destination refuses, the sandbox gets
	// a reset instead of a connection that dies at once.
	up, err := g.dialer.DialContext(g.ctx, "tcp", netip.AddrPortFrom(dst, port).String())
	if err != nil {
		r.Complete(true)
		return
	}
	var wq waiter.Queue
	ep, terr := r.CreateEndpoint(&wq)
	r.Complete(false)
	if terr != nil {
		up.Close()
		return
	}
	g.splice(gonet.NewTCPConn(&wq, ep), up)
}

// decideTCP decides a connection to dst:port; when it refuses, the
// egress.Denial says why.
func (g *Gateway) decideTCP(dst netip.Addr, port uint16) (bool, egress.Denial) {
	if g.isGateway(dst) {
		return false, egress.Denial{Protocol: egress.ProtoTCP, Host: dst.String(), Port: port, Reason: "the gateway serves only DNS on port 53"}
	}
	names := g.namesOf(dst)
	host := dst.String()
	if len(names) > 0 {
		host = names[len(names)-1]
	}
	if ok, reason := g.policy.Decide(dst, port, names); !ok {
		return false, egress.Denial{Protocol: egress.ProtoTCP, Host: host, Port: port, Reason: reason}
	}
	return true, egress.Denial{}
}

// PermitsTCP reports whether the gateway would carry a TCP connection
// from the sandbox to dst:port right now: the same decision, against the
// same names this gateway resolved, that a connection arriving on the
// TAP device gets. It records nothing; a caller that connects on the
// sandbox's behalf when it is true (see the sandbox's connect broker)
// leaves every refusal to the gateway, which records it.
func (g *Gateway) PermitsTCP(dst netip.Addr, port uint16) bool {
	if g.isClosed() {
		return false
	}
	ok, _ := g.decideTCP(dst.Unmap(), port)
	return ok
}

// CheckTCP is PermitsTCP for a connection the caller makes itself, from
// a socket the gateway will never see: a refusal is recorded as an egress.Denial
// like the gateway's own.
func (g *Gateway) CheckTCP(dst netip.Addr, port uint16) bool {
	if g.isClosed() {
		return false
	}
	ok, d := g.decideTCP(dst.Unmap(), port)
	if !ok {
		g.deny(d)
	}
	return ok
}

// splice copies both ways until both directions end, passing half-closes
// on; an error in either direction ends both.
func (g *Gateway) splice(in, out net.Conn) {
	if !g.track(in, out) {
		in.Close()
		out.Close()
		return
	}
	defer g.untrack(in, out)
	done := make(chan struct{})
	g.wg.Add(1) // inside an entered section, so Close is still waiting
	go func() {
		defer g.wg.Done()
		defer close(done)
		g.pipe(out, in)
	}()
	g.pipe(in, out)
	<-done
}

// pipe copies src to dst; at src's end it half-closes dst, and on an
// error it closes both so the other direction stops too. A reader
// goroutine fills buffers while the caller writes the previous ones, so
// receiving on one side and sending on the other use two cores: for a
// download, the host socket's receive and the stack's TCP send.
func (g *Gateway) pipe(dst, src net.Conn) {
	full := make(chan []byte, pipeBuffers)
	free := make(chan []byte, pipeBuffers+1)
	var rerr error
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		defer close(full)
		made := 0
		for {
			var buf []byte
			select {
			case buf = <-free:
			default:
				if made <= pipeBuffers {
					buf = make([]byte, spliceBuffer)
					made++
				} else {
					buf = <-free
				}
			}
			n, err := src.Read(buf)
			if n > 0 {
				full <- buf[:n]
			}
			if err != nil {
				rerr = err
				return
			}
		}
	}()
	for b := range full {
		if _, err := dst.Write(b); err != nil {
			src.Close()
			dst.Close()
			for b := range full { // until the reader sees src closed
				free <- b[:cap(b)]
			}
			return
		}
		free <- b[:cap(b)]
	}
	// The reader has ended; rerr was set before full was closed.
	if errors.Is(rerr, io.EOF) {
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
			return
		}
	}
	src.Close()
	dst.Close()
}

func (g *Gateway) track(cs ...net.Conn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	for _, c := range cs {
		g.conns[c] = struct{}{}
	}
	return true
}

func (g *Gateway) untrack(cs ...net.Conn) {
	g.mu.Lock()
	for _, c := range cs {
		delete(g.conns, c)
	}
	g.mu.Unlock()
	for _, c := range cs {
		c.Close()
	}
}

func addrOf(a tcpip.Address) netip.Addr {
	ip, _ := netip.AddrFromSlice(a.AsSlice())
	return ip.Unmap()
}
