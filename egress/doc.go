// Package egress is the supervisor's side of a sandbox's network: the one
// way out of the sandbox's network namespace.
//
// The sandbox gets a TAP device and nothing else. A Gateway serves that
// device with a userspace TCP/IP stack (gVisor's netstack, in package
// egress/netstack; in its own process through egress/remote): every TCP
// connection the sandbox opens ends in the
// Gateway, which checks the destination against a Policy and, when it is
// allowed, dials the checked address itself from the host's network and
// splices the two. The Gateway is also the sandbox's DNS server: it
// answers only names the Policy allows, resolves them itself, refuses
// private, loopback, link-local, CGNAT, ULA, multicast and cloud-metadata
// answers, and remembers what it answered, so a later connection is
// allowed only to an address it resolved for an allowed name (no
// rebinding window) or to an allowed literal. UDP other than DNS to the
// gateway is relayed only where a "/udp" entry allows it
// ("ntp.example:123/udp"), under the same address checks, through a
// socket of the supervisor's per flow; ICMP beyond the gateway is always
// refused.
//
// Every refusal is a Denial. Because the filtering happens on packets,
// it holds for every program, whether or not it honours proxy variables.
//
// The package owns the allowlist syntax (Compile, ParseRule), the
// addresses of the link between sandbox and gateway (TapName, SandboxIPv4,
// GatewayIPv4, ...), Denial, and what a supervisor holds of a gateway:
// the Gateway and Server interfaces and the registry of the in-process
// Server (Register, InProcess). It imports no gVisor: the CLI, the hook
// and workspace's policy parsing link it without the netstack. It does
// not create the TAP device or the namespace: the sandbox's stage-2
// helper does that inside the sandbox and hands the device's descriptor
// to a Server.
//
// With network mode "all" the same Gateway allows every public address
// (TCP, and UDP relayed per flow) and still refuses private and metadata
// ones, except literal entries, each for its own protocol.
package egress
