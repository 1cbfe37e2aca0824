package netstack

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"strings"
)

// The gateway's DNS server speaks only what a stub resolver asks: one
// question per query, answered with A or AAAA records or with an empty
// answer. This file is that much of RFC 1035, by hand.

// DNS constants used here.
const (
	dnsTypeA    = 1
	dnsTypeAAAA = 28
	dnsClassIN  = 1

	rcodeSuccess  = 0
	rcodeFormErr  = 1
	rcodeServFail = 2
	rcodeNXDomain = 3
	rcodeNotImp   = 4
	rcodeRefused  = 5

	dnsHeaderLen = 12
	// maxUDPAnswer keeps every UDP answer within the classic 512 bytes:
	// the gateway never needs EDNS0 for a handful of addresses.
	maxUDPAnswer = 512
)

var errMalformed = errors.New("malformed DNS query")

// dnsQuery is a parsed query.
type dnsQuery struct {
	id       uint16
	rd       bool   // recursion desired, echoed back
	opcode   uint8  // only 0 (QUERY) is answered
	name     string // lower case, no trailing dot; "" for the root
	qtype    uint16
	qclass   uint16
	question []byte // the question section as sent, echoed back
	// plainLabels: every label is letters, digits, '-' or '_', so the
	// joined name cannot be mistaken for another (no '.' inside a label).
	plainLabels bool
}

// parseQuery reads a query's header and its single question. It
// returns errMalformed (with whatever of the header it read) when the
// message is not a query it can answer at all.
func parseQuery(msg []byte) (dnsQuery, error) {
	var q dnsQuery
	if len(msg) < dnsHeaderLen {
		return q, errMalformed
	}
	q.id = binary.BigEndian.Uint16(msg[0:])
	flags := binary.BigEndian.Uint16(msg[2:])
	q.rd = flags&0x0100 != 0
	q.opcode = uint8(flags>>11) & 0xf
	if flags&0x8000 != 0 { // a response, not a query
		return q, errMalformed
	}
	if binary.BigEndian.Uint16(msg[4:]) != 1 { // QDCOUNT
		return q, errMalformed
	}
	off := dnsHeaderLen
	var labels []string
	valid := true
	total := 0
	for {
		if off >= len(msg) {
			return q, errMalformed
		}
		n := int(msg[off])
		off++
		if n == 0 {
			break
		}
		// Compression pointers (0xC0) and the reserved label types have
		// no place in a question.
		if n > 63 || off+n > len(msg) {
			return q, errMalformed
		}
		if total += n + 1; total > 255 {
			return q, errMalformed
		}
		label := msg[off : off+n]
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				valid = false
			}
		}
		labels = append(labels, strings.ToLower(string(label)))
		off += n
	}
	if off+4 > len(msg) {
		return q, errMalformed
	}
	q.qtype = binary.BigEndian.Uint16(msg[off:])
	q.qclass = binary.BigEndian.Uint16(msg[off+2:])
	off += 4
	q.question = msg[dnsHeaderLen:off]
	q.name = strings.Join(labels, ".")
	q.plainLabels = valid
	return q, nil
}

// dnsResponse builds the answer to q: rcode, and for a successful A or
// AAAA query the addresses as records with ttl. Addresses of the other
// family are skipped; records that would push the message past max bytes
// are left out.
func dnsResponse(q dnsQuery, rcode int, addrs []netip.Addr, ttl uint32, max int) []byte {
	out := make([]byte, dnsHeaderLen, dnsHeaderLen+len(q.question)+16*len(addrs))
	binary.BigEndian.PutUint16(out[0:], q.id)
	flags := uint16(0x8000) | uint16(q.opcode&0xf)<<11 | 0x0080 | uint16(rcode&0xf) // QR, opcode, RA, rcode
	if q.rd {
		flags |= 0x0100
	}
	binary.BigEndian.PutUint16(out[2:], flags)
	if q.question == nil {
		return out // FORMERR to something unparsable: header only
	}
	binary.BigEndian.PutUint16(out[4:], 1)
	out = append(out, q.question...)
	count := 0
	for _, a := range addrs {
		var rdata []byte
		switch {
		case q.qtype == dnsTypeA && a.Is4():
			b := a.As4()
			rdata = b[:]
		case q.qtype == dnsTypeAAAA && a.Is6() && !a.Is4In6():
			b := a.As16()
			rdata = b[:]
		default:
			continue
		}
		if len(out)+12+len(rdata) > max {
			break
		}
		// Name: a pointer to the question's name at offset 12.
		out = append(out, 0xc0, dnsHeaderLen)
		out = binary.BigEndian.AppendUint16(out, q.qtype)
		out = binary.BigEndian.AppendUint16(out, dnsClassIN)
		out = binary.BigEndian.AppendUint32(out, ttl)
		out = binary.BigEndian.AppendUint16(out, uint16(len(rdata)))
		out = append(out, rdata...)
		count++
	}
	binary.BigEndian.PutUint16(out[6:], uint16(count))
	return out
}
