package linux

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The helper parses the few addresses of its NetworkConfig itself rather
// than with package net or net/netip: importing either would make the
// stage-2 init hook (stage2.go) wait for them, and Go initialises every
// package that sorts before "net" and is ready first, about fifty of
// them in the airlock binary (the Docker client's regexps, x/text,
// SQLite's libc) that the helper never uses. See docs/BENCHMARKS.md.

// ipAddr is an IPv4 (4 bytes) or IPv6 (16 bytes) address.
type ipAddr []byte

func (a ipAddr) is6() bool { return len(a) == 16 }

// ipPrefix is an address and the length of its network part.
type ipPrefix struct {
	addr ipAddr
	bits int
}

// parseMAC reads a 48-bit link address written as six colon-separated
// hexadecimal bytes ("02:41:69:72:00:64"), the only form the supervisor
// sends.
func parseMAC(s string) ([]byte, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 6 {
		return nil, fmt.Errorf("link address %q: want six colon-separated bytes", s)
	}
	mac := make([]byte, 6)
	for i, p := range parts {
		if len(p) != 2 {
			return nil, fmt.Errorf("link address %q: byte %q is not two hex digits", s, p)
		}
		v, err := strconv.ParseUint(p, 16, 8)
		if err != nil {
			return nil, fmt.Errorf("link address %q: byte %q is not hexadecimal", s, p)
		}
		mac[i] = byte(v)
	}
	return mac, nil
}

// parsePrefix reads "ADDR/BITS".
func parsePrefix(s string) (ipPrefix, error) {
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		return ipPrefix{}, fmt.Errorf("prefix %q: no /BITS", s)
	}
	addr, err := parseIP(a)
	if err != nil {
		return ipPrefix{}, err
	}
	bits, err := strconv.Atoi(b)
	if err != nil || bits < 0 || bits > 8*len(addr) || b != strconv.Itoa(bits) {
		return ipPrefix{}, fmt.Errorf("prefix %q: bad length %q", s, b)
	}
	return ipPrefix{addr, bits}, nil
}

// parseIP reads a dotted-quad IPv4 address or an IPv6 address in hex
// groups with at most one "::" (no zone, no embedded IPv4: the supervisor
// sends neither).
func parseIP(s string) (ipAddr, error) {
	if !strings.Contains(s, ":") {
		return parseIPv4(s)
	}
	return parseIPv6(s)
}

func parseIPv4(s string) (ipAddr, error) {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return nil, fmt.Errorf("IPv4 address %q: want four dot-separated numbers", s)
	}
	a := make(ipAddr, 4)
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 8)
		// "01" is refused as net/netip refuses it: octal to some readers.
		if err != nil || p != strconv.FormatUint(v, 10) {
			return nil, fmt.Errorf("IPv4 address %q: bad number %q", s, p)
		}
		a[i] = byte(v)
	}
	return a, nil
}

func parseIPv6(s string) (ipAddr, error) {
	bad := func(why string) (ipAddr, error) {
		return nil, fmt.Errorf("IPv6 address %q: %s", s, why)
	}
	head, tail, compressed := strings.Cut(s, "::")
	if compressed && strings.Contains(tail, "::") {
		return bad("more than one ::")
	}
	groups := func(part string) ([]uint16, error) {
		if part == "" {
			return nil, nil
		}
		var out []uint16
		for _, g := range strings.Split(part, ":") {
			if len(g) == 0 || len(g) > 4 {
				return nil, errors.New("empty or over-long group " + strconv.Quote(g))
			}
			v, err := strconv.ParseUint(g, 16, 16)
			if err != nil {
				return nil, errors.New("group " + strconv.Quote(g) + " is not hexadecimal")
			}
			out = append(out, uint16(v))
		}
		return out, nil
	}
	h, err := groups(head)
	if err != nil {
		return bad(err.Error())
	}
	t, err := groups(tail)
	if err != nil {
		return bad(err.Error())
	}
	switch {
	case !compressed && len(h) != 8:
		return bad("want eight groups or ::")
	case compressed && len(h)+len(t) > 7:
		return bad(":: stands for no group")
	}
	a := make(ipAddr, 16)
	for i, v := range h {
		a[2*i], a[2*i+1] = byte(v>>8), byte(v)
	}
	for i, v := range t {
		j := 8 - len(t) + i
		a[2*j], a[2*j+1] = byte(v>>8), byte(v)
	}
	return a, nil
}
