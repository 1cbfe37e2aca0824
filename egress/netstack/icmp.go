package netstack

import (
	"github.com/airlockhq/airlock/egress"
	"net/netip"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/link/nested"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
)

// icmpFilter sits between the TAP and the stack and drops echo requests
// to anything but the gateway. In promiscuous mode the stack would
// otherwise answer a ping to any address itself, and the sandbox would
// believe the internet answers; nothing ICMP is ever forwarded.
type icmpFilter struct {
	nested.Endpoint
	g *Gateway
}

func newICMPFilter(child stack.LinkEndpoint, g *Gateway) *icmpFilter {
	f := &icmpFilter{g: g}
	f.Endpoint.Init(child, f)
	return f
}

// DeliverNetworkPacket implements stack.NetworkDispatcher.
func (f *icmpFilter) DeliverNetworkPacket(proto tcpip.NetworkProtocolNumber, pkt *stack.PacketBuffer) {
	if dst, ok := echoRequestTo(proto, pkt); ok && !f.g.isGateway(dst) {
		f.g.deny(egress.Denial{Protocol: egress.ProtoICMP, Host: dst.String(), Reason: "ICMP beyond the gateway is not forwarded"})
		return
	}
	f.Endpoint.DeliverNetworkPacket(proto, pkt)
}

// echoRequestTo returns the destination of an ICMP or ICMPv6 echo
// request (without IPv6 extension headers); ok is false for anything
// else.
func echoRequestTo(proto tcpip.NetworkProtocolNumber, pkt *stack.PacketBuffer) (netip.Addr, bool) {
	switch proto {
	case header.IPv4ProtocolNumber:
		b, ok := pkt.Data().PullUp(header.IPv4MinimumSize)
		if !ok {
			return netip.Addr{}, false
		}
		h := header.IPv4(b)
		hl := int(h.HeaderLength())
		if h.Protocol() != uint8(header.ICMPv4ProtocolNumber) || hl < header.IPv4MinimumSize {
			return netip.Addr{}, false
		}
		if b, ok = pkt.Data().PullUp(hl + 1); !ok || header.ICMPv4Type(b[hl]) != header.ICMPv4Echo {
			return netip.Addr{}, false
		}
		return netip.AddrFrom4([4]byte(b[16:20])), true
	case header.IPv6ProtocolNumber:
		b, ok := pkt.Data().PullUp(header.IPv6MinimumSize + 1)
		if !ok {
			return netip.Addr{}, false
		}
		h := header.IPv6(b)
		if h.NextHeader() != uint8(header.ICMPv6ProtocolNumber) || header.ICMPv6Type(b[header.IPv6MinimumSize]) != header.ICMPv6EchoRequest {
			return netip.Addr{}, false
		}
		return netip.AddrFrom16([16]byte(b[24:40])), true
	}
	return netip.Addr{}, false
}
