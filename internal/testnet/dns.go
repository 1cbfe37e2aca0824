package testnet

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
)

// DNSServer is an upstream DNS server on a test host. It answers A and
// AAAA questions from its records, every other question with an empty
// answer, unknown names with NXDOMAIN, and logs every question it
// receives: the evidence that a refused name never left the gateway.
type DNSServer struct {
	Addr netip.AddrPort

	mu      sync.Mutex
	records map[string][]netip.Addr
	log     []string
}

// Query is one logged question: "name TYPE", like "evil.test. TXT".
type Query = string

// NewDNSServer serves records (names with the trailing dot, e.g.
// "allowed.test.") on udp port 53 of the test host's IPv4 address.
func NewDNSServer(t testing.TB, h *Host, records map[string][]netip.Addr) *DNSServer {
	t.Helper()
	c := h.ListenUDP(t, h.Addr4.String(), 53)
	s := &DNSServer{Addr: netip.AddrPortFrom(h.Addr4, 53), records: map[string][]netip.Addr{}}
	for k, v := range records {
		s.records[strings.ToLower(k)] = v
	}
	go s.serve(c)
	return s
}

// Set replaces the records of name.
func (s *DNSServer) Set(name string, addrs ...netip.Addr) {
	s.mu.Lock()
	s.records[strings.ToLower(name)] = addrs
	s.mu.Unlock()
}

// Log returns the questions received so far.
func (s *DNSServer) Log() []Query {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Query(nil), s.log...)
}

// Asked reports whether any logged question's name contains substr.
func (s *DNSServer) Asked(substr string) bool {
	for _, q := range s.Log() {
		if strings.Contains(strings.ToLower(q), strings.ToLower(substr)) {
			return true
		}
	}
	return false
}

// Resolver returns a resolver that asks this server whatever its
// resolv.conf says: the supervisor in a test never asks a real resolver.
func (s *DNSServer) Resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", s.Addr.String())
	}}
}

func (s *DNSServer) serve(c net.PacketConn) {
	buf := make([]byte, 1500)
	for {
		n, from, err := c.ReadFrom(buf)
		if err != nil {
			return
		}
		if resp := s.answer(buf[:n]); resp != nil {
			c.WriteTo(resp, from)
		}
	}
}

var typeNames = map[uint16]string{1: "A", 28: "AAAA", 16: "TXT", 15: "MX", 5: "CNAME", 33: "SRV", 65: "HTTPS", 255: "ANY"}

func (s *DNSServer) answer(msg []byte) []byte {
	if len(msg) < 12 {
		return nil
	}
	off := 12
	var labels []string
	for off < len(msg) && msg[off] != 0 {
		n := int(msg[off])
		if n > 63 || off+1+n > len(msg) {
			return nil
		}
		labels = append(labels, string(msg[off+1:off+1+n]))
		off += 1 + n
	}
	if off+5 > len(msg) {
		return nil
	}
	off++
	qtype := binary.BigEndian.Uint16(msg[off:])
	off += 4
	name := strings.ToLower(strings.Join(labels, ".") + ".")
	tn := typeNames[qtype]
	if tn == "" {
		tn = fmt.Sprint("TYPE", qtype)
	}
	s.mu.Lock()
	s.log = append(s.log, name+" "+tn)
	addrs, known := s.records[name]
	s.mu.Unlock()

	out := append([]byte(nil), msg[:off]...)
	flags := uint16(0x8180) // response, RD, RA
	if !known {
		flags |= 3 // NXDOMAIN
	}
	binary.BigEndian.PutUint16(out[2:], flags)
	binary.BigEndian.PutUint16(out[6:], 0)
	binary.BigEndian.PutUint16(out[8:], 0)
	binary.BigEndian.PutUint16(out[10:], 0)
	count := 0
	for _, a := range addrs {
		var rdata []byte
		switch {
		case qtype == 1 && a.Is4():
			b := a.As4()
			rdata = b[:]
		case qtype == 28 && a.Is6():
			b := a.As16()
			rdata = b[:]
		default:
			continue
		}
		out = append(out, 0xc0, 12)
		out = binary.BigEndian.AppendUint16(out, qtype)
		out = binary.BigEndian.AppendUint16(out, 1)
		out = binary.BigEndian.AppendUint32(out, 5)
		out = binary.BigEndian.AppendUint16(out, uint16(len(rdata)))
		out = append(out, rdata...)
		count++
	}
	binary.BigEndian.PutUint16(out[6:], uint16(count))
	return out
}
