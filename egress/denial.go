package egress

import (
	"net"
	"strconv"
	"sync"

	"github.com/airlockhq/airlock/internal/visible"
)

// Protocols of a Denial.
const (
	ProtoTCP  = "tcp"
	ProtoUDP  = "udp"
	ProtoDNS  = "dns"  // a lookup the DNS server refused to answer
	ProtoICMP = "icmp" // echo requests beyond the gateway
)

// Denial is one refused attempt of the sandbox to reach something.
type Denial struct {
	Protocol string // ProtoTCP, ProtoUDP, ProtoDNS or ProtoICMP
	// Host is what the program asked for: the name it looked up, or the
	// name the gateway resolved to the address it connected to, or else
	// the address.
	Host string
	// Port is the destination port; 0 for DNS lookups and ICMP.
	Port   uint16
	Reason string
}

// Target is "host:port" ("[2001:db8::1]:443" for IPv6), or the host
// alone when there is no port.
func (d Denial) Target() string {
	if d.Port == 0 {
		return d.Host
	}
	return net.JoinHostPort(d.Host, strconv.Itoa(int(d.Port)))
}

// String is the line an agent reads on the run's stderr, after
// "airlock: ": "blocked connect to evil.example:443 (not in allowlist)";
// always one line.
func (d Denial) String() string {
	verb := "blocked connect to "
	switch d.Protocol {
	case ProtoUDP:
		verb = "blocked UDP to "
	case ProtoDNS:
		verb = "blocked DNS lookup of "
	case ProtoICMP:
		verb = "blocked ICMP to "
	}
	// The target is a name the sandbox asked for: escaped, it cannot end
	// the line or send the terminal a sequence.
	return verb + visible.Text(d.Target()) + " (" + visible.Text(d.Reason) + ")"
}

// maxDenials caps the distinct denials one run keeps: a program that
// scans the address space must not grow the supervisor's memory.
const maxDenials = 1000

// denialLog keeps the distinct denials of one run, in order, and calls
// notify once for each new one.
type denialLog struct {
	notify func(Denial)

	mu      sync.Mutex
	seen    map[Denial]bool
	list    []Denial
	dropped int
}

func (l *denialLog) add(d Denial) {
	l.mu.Lock()
	if l.seen[d] {
		l.mu.Unlock()
		return
	}
	if len(l.list) >= maxDenials {
		l.dropped++
		l.mu.Unlock()
		return
	}
	if l.seen == nil {
		l.seen = map[Denial]bool{}
	}
	l.seen[d] = true
	l.list = append(l.list, d)
	l.mu.Unlock()
	if l.notify != nil {
		l.notify(d)
	}
}

func (l *denialLog) snapshot() ([]Denial, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Denial(nil), l.list...), l.dropped
}
