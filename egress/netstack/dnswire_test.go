package netstack

import (
	"encoding/binary"
	"net/netip"
	"testing"
)

// query builds a DNS query for name and qtype, with an EDNS0 OPT record
// as dig sends.
func query(id uint16, name string, qtype uint16) []byte {
	msg := binary.BigEndian.AppendUint16(nil, id)
	msg = append(msg, 0x01, 0x20, 0, 1, 0, 0, 0, 0, 0, 1) // RD+AD, QD=1, AR=1
	for _, l := range splitLabels(name) {
		msg = append(msg, byte(len(l)))
		msg = append(msg, l...)
	}
	msg = append(msg, 0)
	msg = binary.BigEndian.AppendUint16(msg, qtype)
	msg = binary.BigEndian.AppendUint16(msg, dnsClassIN)
	return append(msg, 0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0) // OPT
}

func splitLabels(name string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(name); i++ {
		if i == len(name) || name[i] == '.' {
			if i > start {
				out = append(out, name[start:i])
			}
			start = i + 1
		}
	}
	return out
}

func TestParseQuery(t *testing.T) {
	q, err := parseQuery(query(0xbeef, "Api.Example.COM", dnsTypeAAAA))
	if err != nil {
		t.Fatal(err)
	}
	if q.id != 0xbeef || !q.rd || q.name != "api.example.com" || q.qtype != dnsTypeAAAA || q.qclass != dnsClassIN || !q.plainLabels {
		t.Fatalf("got %+v", q)
	}
	weird := query(1, "a", dnsTypeA)
	weird[13] = '.' // the label "." would join into a different name
	if q, err := parseQuery(weird); err != nil || q.plainLabels {
		t.Fatalf("a label with a dot: %+v %v", q, err)
	}
	for name, msg := range map[string][]byte{
		"short":       {1, 2, 3},
		"response":    func() []byte { m := query(1, "a.b", 1); m[2] |= 0x80; return m }(),
		"two qs":      func() []byte { m := query(1, "a.b", 1); m[5] = 2; return m }(),
		"pointer":     func() []byte { m := query(1, "a.b", 1); m[12] = 0xc0; return m }(),
		"truncated":   query(1, "a.b", 1)[:15],
		"label ovrun": func() []byte { m := query(1, "a.b", 1); m[12] = 60; return m[:20] }(),
	} {
		if _, err := parseQuery(msg); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

func TestDNSResponse(t *testing.T) {
	q, _ := parseQuery(query(7, "a.test", dnsTypeA))
	addrs := []netip.Addr{netip.MustParseAddr("198.51.100.2"), netip.MustParseAddr("2001:db8::2"), netip.MustParseAddr("198.51.100.3")}
	resp := dnsResponse(q, rcodeSuccess, addrs, 60, maxUDPAnswer)
	if binary.BigEndian.Uint16(resp[0:]) != 7 || resp[2]&0x80 == 0 || resp[3]&0xf != 0 {
		t.Fatalf("header % x", resp[:12])
	}
	if n := binary.BigEndian.Uint16(resp[6:]); n != 2 {
		t.Fatalf("%d answers, want the 2 IPv4 ones", n)
	}
	// Answers never push the message past the limit.
	many := make([]netip.Addr, 100)
	for i := range many {
		many[i] = netip.AddrFrom4([4]byte{198, 51, 100, byte(i)})
	}
	if resp := dnsResponse(q, rcodeSuccess, many, 60, maxUDPAnswer); len(resp) > maxUDPAnswer {
		t.Fatalf("%d bytes", len(resp))
	}
	nx := dnsResponse(q, rcodeNXDomain, nil, 0, maxUDPAnswer)
	if nx[3]&0xf != rcodeNXDomain || binary.BigEndian.Uint16(nx[6:]) != 0 {
		t.Fatalf("NXDOMAIN % x", nx)
	}
}

// FuzzParseQuery: any input parses or fails cleanly, and a parsed query
// gets an answer that echoes its question.
func FuzzParseQuery(f *testing.F) {
	f.Add(query(1, "allowed.test", dnsTypeA))
	f.Add(query(2, "x.y.z", 16))
	f.Fuzz(func(t *testing.T, msg []byte) {
		q, err := parseQuery(msg)
		if err != nil {
			return
		}
		resp := dnsResponse(q, rcodeSuccess, []netip.Addr{netip.MustParseAddr("198.51.100.2")}, 60, maxUDPAnswer)
		if len(resp) < dnsHeaderLen+len(q.question) || string(resp[dnsHeaderLen:dnsHeaderLen+len(q.question)]) != string(q.question) {
			t.Fatalf("answer does not echo the question")
		}
	})
}
