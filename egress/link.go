package egress

// The sandbox's side of the link. The sandbox holds the ".100" addresses
// as host routes (/32, /128) with the gateway as its only neighbour, so
// every destination but its own address goes to the gateway.
const (
	TapName     = "eth0"
	MTU         = 65520 // the largest a TAP takes: few, large segments per byte
	SandboxIPv4 = "10.0.2.100"
	GatewayIPv4 = "10.0.2.2"
	SandboxIPv6 = "fd41:6972:6c6b::100"
	GatewayIPv6 = "fd41:6972:6c6b::2"
	// GatewayMAC and SandboxMAC are the two link addresses on the TAP.
	// Both ends know both from the start (static neighbour entries), so
	// the first connection waits for no ARP or neighbour discovery.
	GatewayMAC = "02:41:69:72:00:02"
	SandboxMAC = "02:41:69:72:00:64"
	// DNSPort is the only port the gateway serves itself.
	DNSPort = 53
)
