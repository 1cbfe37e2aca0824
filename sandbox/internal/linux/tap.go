package linux

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// NetworkConfig gives the sandbox's new network namespace its only way
// out: a TAP device whose other end is the supervisor's egress gateway.
// The helper creates and configures the device in the namespace, writes
// nothing on the host, hands the device's descriptor to the supervisor and
// waits until the supervisor serves it, so the command never runs before
// its network does.
type NetworkConfig struct {
	// Tap is the device name, e.g. "eth0".
	Tap string `json:"tap"`
	MTU int    `json:"mtu"`
	// MAC is the device's link address and GatewayMAC the gateway's,
	// entered as a permanent neighbour of each gateway address: the
	// first packet waits for no ARP or neighbour discovery.
	MAC        string `json:"mac"`
	GatewayMAC string `json:"gateway_mac"`
	// Addrs are the sandbox's addresses in CIDR form ("10.0.2.100/32").
	Addrs []string `json:"addrs"`
	// Gateways are the gateway's addresses, at most one per family: each
	// gets a host route on the device and carries the default route.
	Gateways []string `json:"gateways"`
	// FD is the inherited unix socket the helper sends the TAP descriptor
	// over (SCM_RIGHTS) and then reads one byte from when the supervisor
	// serves the device.
	FD int `json:"fd"`
}

// setupNetwork creates, configures and hands over the TAP device. It runs
// before the mount view, while /dev/net/tun is still the host's.
func setupNetwork(c *NetworkConfig) error {
	defer unix.Close(c.FD)
	tap, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open /dev/net/tun: %w", err)
	}
	// The supervisor holds its own copy once it has been sent; the
	// command must never inherit one.
	defer unix.Close(tap)
	ifr, err := unix.NewIfreq(c.Tap)
	if err != nil {
		return err
	}
	ifr.SetUint16(unix.IFF_TAP | unix.IFF_NO_PI)
	if err := unix.IoctlIfreq(tap, unix.TUNSETIFF, ifr); err != nil {
		return fmt.Errorf("create TAP %s: %w", c.Tap, err)
	}
	mac, err := parseMAC(c.MAC)
	if err != nil {
		return fmt.Errorf("mac %q: %w", c.MAC, err)
	}
	gwMAC, err := parseMAC(c.GatewayMAC)
	if err != nil {
		return fmt.Errorf("gateway mac %q: %w", c.GatewayMAC, err)
	}
	index, err := linkUp(c.Tap, c.MTU, mac)
	if err != nil {
		return err
	}
	nl, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return fmt.Errorf("netlink: %w", err)
	}
	defer unix.Close(nl)
	for _, a := range c.Addrs {
		p, err := parsePrefix(a)
		if err != nil {
			return err
		}
		if err := addAddress(nl, index, p); err != nil {
			return fmt.Errorf("address %s: %w", a, err)
		}
	}
	for _, g := range c.Gateways {
		gw, err := parseIP(g)
		if err != nil {
			return err
		}
		if err := addNeighbour(nl, index, gw, gwMAC); err != nil {
			return fmt.Errorf("neighbour %s: %w", g, err)
		}
		// First the gateway on-link, then everything through it.
		if err := addRoute(nl, index, ipPrefix{gw, 8 * len(gw)}, nil); err != nil {
			return fmt.Errorf("route to %s: %w", g, err)
		}
		def := ipPrefix{make(ipAddr, len(gw)), 0}
		if err := addRoute(nl, index, def, gw); err != nil {
			return fmt.Errorf("default route via %s: %w", g, err)
		}
	}
	if err := unix.Sendmsg(c.FD, []byte{0}, unix.UnixRights(tap), nil, 0); err != nil {
		return fmt.Errorf("hand the TAP to the supervisor: %w", err)
	}
	var ack [1]byte
	n, err := unix.Read(c.FD, ack[:])
	if err != nil || n != 1 {
		return fmt.Errorf("the supervisor did not start the egress gateway (read %d, %v)", n, err)
	}
	return nil
}

// linkUp sets the MTU and link address of a device, brings it up and
// returns its index.
func linkUp(name string, mtu int, mac []byte) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return 0, err
	}
	if mtu > 0 {
		ifr.SetUint32(uint32(mtu))
		if err := unix.IoctlIfreq(fd, unix.SIOCSIFMTU, ifr); err != nil {
			return 0, fmt.Errorf("mtu %d on %s: %w", mtu, name, err)
		}
	}
	hw := unix.RawSockaddr{Family: unix.ARPHRD_ETHER}
	for i, b := range mac {
		hw.Data[i] = int8(b)
	}
	if err := ioctlIfreqSockaddr(fd, unix.SIOCSIFHWADDR, name, hw); err != nil {
		return 0, fmt.Errorf("link address of %s: %w", name, err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return 0, err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return 0, fmt.Errorf("bring %s up: %w", name, err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFINDEX, ifr); err != nil {
		return 0, err
	}
	return int(ifr.Uint32()), nil
}

// addAddress adds p to the device, without duplicate address detection
// (the link has two ends; DAD would hold an IPv6 address for a second).
func addAddress(nl, index int, p ipPrefix) error {
	family := byte(unix.AF_INET)
	if p.addr.is6() {
		family = unix.AF_INET6
	}
	msg := []byte{family, byte(p.bits), 0, unix.RT_SCOPE_UNIVERSE}
	msg = binary.NativeEndian.AppendUint32(msg, uint32(index))
	msg = appendAttr(msg, unix.IFA_LOCAL, p.addr)
	msg = appendAttr(msg, unix.IFA_ADDRESS, p.addr)
	msg = appendAttr(msg, unix.IFA_FLAGS, binary.NativeEndian.AppendUint32(nil, unix.IFA_F_NODAD))
	return netlinkDo(nl, unix.RTM_NEWADDR, msg)
}

// addRoute adds a route to dst on the device, through gw when set, else
// on-link.
func addRoute(nl, index int, dst ipPrefix, gw ipAddr) error {
	family := byte(unix.AF_INET)
	if dst.addr.is6() {
		family = unix.AF_INET6
	}
	scope := byte(unix.RT_SCOPE_LINK)
	if gw != nil {
		scope = unix.RT_SCOPE_UNIVERSE
	}
	msg := []byte{family, byte(dst.bits), 0, 0, unix.RT_TABLE_MAIN, unix.RTPROT_BOOT, scope, unix.RTN_UNICAST}
	msg = binary.NativeEndian.AppendUint32(msg, 0)
	if dst.bits > 0 {
		msg = appendAttr(msg, unix.RTA_DST, dst.addr)
	}
	if gw != nil {
		msg = appendAttr(msg, unix.RTA_GATEWAY, gw)
	}
	msg = appendAttr(msg, unix.RTA_OIF, binary.NativeEndian.AppendUint32(nil, uint32(index)))
	return netlinkDo(nl, unix.RTM_NEWROUTE, msg)
}

// ioctlIfreqSockaddr issues an ioctl whose struct ifreq carries a
// sockaddr (SIOCSIFHWADDR), which unix.Ifreq has no setter for.
func ioctlIfreqSockaddr(fd int, req uint, name string, sa unix.RawSockaddr) error {
	var ifr struct {
		name [unix.IFNAMSIZ]byte
		sa   unix.RawSockaddr
		_    [8]byte // struct ifreq is 40 bytes on 64-bit
	}
	copy(ifr.name[:], name)
	ifr.sa = sa
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(unsafe.Pointer(&ifr)))
	if errno != 0 {
		return errno
	}
	return nil
}

// addNeighbour enters mac as the permanent link address of addr.
func addNeighbour(nl, index int, addr ipAddr, mac []byte) error {
	family := byte(unix.AF_INET)
	if addr.is6() {
		family = unix.AF_INET6
	}
	msg := []byte{family, 0, 0, 0}
	msg = binary.NativeEndian.AppendUint32(msg, uint32(index))
	msg = binary.NativeEndian.AppendUint16(msg, unix.NUD_PERMANENT)
	msg = append(msg, 0, unix.RTN_UNICAST) // flags, type
	msg = appendAttr(msg, unix.NDA_DST, addr)
	msg = appendAttr(msg, unix.NDA_LLADDR, mac)
	return netlinkDo(nl, unix.RTM_NEWNEIGH, msg)
}

func appendAttr(b []byte, typ uint16, data []byte) []byte {
	n := unix.SizeofRtAttr + len(data)
	b = binary.NativeEndian.AppendUint16(b, uint16(n))
	b = binary.NativeEndian.AppendUint16(b, typ)
	b = append(b, data...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// netlinkDo sends one create request and reads its acknowledgement.
func netlinkDo(nl int, typ uint16, body []byte) error {
	const seq = 1
	msg := binary.NativeEndian.AppendUint32(nil, uint32(unix.SizeofNlMsghdr+len(body)))
	msg = binary.NativeEndian.AppendUint16(msg, typ)
	msg = binary.NativeEndian.AppendUint16(msg, unix.NLM_F_REQUEST|unix.NLM_F_ACK|unix.NLM_F_CREATE|unix.NLM_F_EXCL)
	msg = binary.NativeEndian.AppendUint32(msg, seq)
	msg = binary.NativeEndian.AppendUint32(msg, 0)
	msg = append(msg, body...)
	if err := unix.Sendto(nl, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, 4096)
	n, _, err := unix.Recvfrom(nl, buf, 0)
	if err != nil {
		return err
	}
	if n < unix.SizeofNlMsghdr+4 || binary.NativeEndian.Uint16(buf[4:]) != unix.NLMSG_ERROR {
		return errors.New("no netlink acknowledgement")
	}
	if code := int32(binary.NativeEndian.Uint32(buf[unix.SizeofNlMsghdr:])); code != 0 {
		return unix.Errno(-code)
	}
	return nil
}
