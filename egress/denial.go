package egress

import (
	"net"
	"strconv"

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
