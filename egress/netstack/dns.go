package netstack

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/airlockhq/airlock/egress"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
)

// serveDNSUDP answers queries sent to the gateway's port 53 over UDP.
func (g *Gateway) serveDNSUDP(c *gonet.UDPConn) {
	defer g.wg.Done()
	buf := make([]byte, 1500)
	for {
		n, from, err := c.ReadFrom(buf)
		if err != nil {
			return // closed
		}
		msg := append([]byte(nil), buf[:n]...)
		if !g.enter() {
			return
		}
		go func() {
			defer g.wg.Done()
			if resp := g.answer(msg, maxUDPAnswer); resp != nil {
				c.WriteTo(resp, from)
			}
		}()
	}
}

// serveDNSTCP answers queries over TCP (RFC 7766 framing: a two-byte
// length before each message), which resolvers use after a truncated
// UDP answer or when configured to.
func (g *Gateway) serveDNSTCP(l *gonet.TCPListener) {
	defer g.wg.Done()
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		if !g.track(c) || !g.enter() {
			c.Close()
			return
		}
		go func() {
			defer g.wg.Done()
			defer g.untrack(c)
			for {
				c.SetReadDeadline(time.Now().Add(10 * time.Second))
				var n [2]byte
				if _, err := io.ReadFull(c, n[:]); err != nil {
					return
				}
				msg := make([]byte, binary.BigEndian.Uint16(n[:]))
				if _, err := io.ReadFull(c, msg); err != nil {
					return
				}
				resp := g.answer(msg, 65535)
				if resp == nil {
					return
				}
				if _, err := c.Write(binary.BigEndian.AppendUint16(nil, uint16(len(resp)))); err != nil {
					return
				}
				if _, err := c.Write(resp); err != nil {
					return
				}
			}
		}()
	}
}

// answer is the DNS server: names outside the policy get NXDOMAIN and are
// never looked up; A and AAAA questions for allowed names are resolved by
// the supervisor, stripped of addresses the sandbox may not reach, and
// remembered; other questions for allowed names get an empty answer.
// It returns nil when msg is too short to answer at all.
func (g *Gateway) answer(msg []byte, max int) []byte {
	q, err := parseQuery(msg)
	if err != nil {
		if len(msg) < dnsHeaderLen {
			return nil
		}
		return dnsResponse(dnsQuery{id: q.id, rd: q.rd, opcode: q.opcode}, rcodeFormErr, nil, 0, max)
	}
	if q.opcode != 0 {
		return dnsResponse(q, rcodeNotImp, nil, 0, max)
	}
	if q.qclass != dnsClassIN {
		return dnsResponse(q, rcodeRefused, nil, 0, max)
	}
	if !q.plainLabels || !g.policy.AllowsName(q.name) {
		g.deny(egress.Denial{Protocol: egress.ProtoDNS, Host: printable(q.name), Reason: "not in allowlist"})
		return dnsResponse(q, rcodeNXDomain, nil, 0, max)
	}
	if q.qtype != dnsTypeA && q.qtype != dnsTypeAAAA {
		return dnsResponse(q, rcodeSuccess, nil, 0, max)
	}
	addrs, rcode := g.resolve(q.name, q.qtype)
	return dnsResponse(q, rcode, addrs, answerTTL, max)
}

// resolve looks name up for the sandbox and keeps only the addresses the
// policy lets it reach.
func (g *Gateway) resolve(name string, qtype uint16) ([]netip.Addr, int) {
	select {
	case g.lookup <- struct{}{}:
		defer func() { <-g.lookup }()
	case <-g.ctx.Done():
		return nil, rcodeServFail
	}
	network := "ip4"
	if qtype == dnsTypeAAAA {
		network = "ip6"
	}
	ctx, cancel := context.WithTimeout(g.ctx, g.lookupTO)
	defer cancel()
	// The trailing dot keeps the host's search domains out of it.
	found, err := g.resolver.LookupNetIP(ctx, network, name+".")
	if err != nil {
		var de *net.DNSError
		if errors.As(err, &de) && de.IsNotFound {
			// Also what Go says for "no records of this family": answer
			// NOERROR with nothing, which is right in both cases for a
			// stub resolver that asks for A and AAAA.
			return nil, rcodeSuccess
		}
		return nil, rcodeServFail
	}
	var keep, refused []netip.Addr
	for _, a := range found {
		a = a.Unmap()
		if g.policy.KeepsAnswer(a) {
			keep = append(keep, a)
		} else {
			refused = append(refused, a)
		}
	}
	if len(refused) > 0 {
		g.deny(egress.Denial{Protocol: egress.ProtoDNS, Host: name,
			Reason: fmt.Sprintf("resolves to %s, %s; only an exact literal entry can allow it", refused[0], egress.AddressClass(refused[0]))})
	}
	// Remembered before the answer leaves: a connection can never race
	// ahead of its address being known.
	g.remember(name, keep)
	return keep, rcodeSuccess
}

// printable makes a queried name safe to print on a terminal.
func printable(name string) string {
	if name == "" {
		return "."
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x21 || c > 0x7e {
			q := strconv.QuoteToASCII(name)
			return strings.Trim(q, `"`)
		}
	}
	return name
}
