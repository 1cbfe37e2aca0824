package tool

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// Hosts are judged in the form a WHATWG URL parser (the one browsers and
// Claude Code's WebFetch use) gives them, so that one host has one
// spelling: "EVIL.example", "evil.example.", "evil。example" (ideographic
// full stop), "ｅｖｉｌ.example" (full-width letters), "evi\u00adl.example"
// (a soft hyphen, which UTS 46 deletes) and "xn--" forms all become the
// ASCII name the connection would go to, and "2130706433", "0x7f.1" and
// "017700000001" become 127.0.0.1. A host that fails is refused, never
// matched as written.

// hostProfile is UTS 46 processing as the WHATWG URL standard's
// domain-to-ASCII runs it: non-transitional, CheckHyphens and
// UseSTD3ASCIIRules off (forbidden code points are checked after),
// CheckBidi and CheckJoiners on, no DNS length check.
var hostProfile = idna.New(
	idna.MapForLookup(),
	idna.Transitional(false),
	idna.StrictDomainName(false),
	idna.CheckHyphens(false),
	idna.CheckJoiners(true),
	idna.BidiRule(),
	idna.VerifyDNSLength(false),
)

// ErrInvalidHost is wrapped by the errors of NormalizeHost.
var ErrInvalidHost = errors.New("invalid host")

// NormalizeHost returns host (a URL's host, without port; IPv6 with or
// without brackets) in the form rules match: an IP address in its
// canonical text (IPv6 without brackets), a name in lower-case ASCII
// after UTS 46 mapping, without the root's trailing dot.
func NormalizeHost(host string) (string, error) {
	if host == "" {
		return "", fmt.Errorf("%w: empty", ErrInvalidHost)
	}
	if strings.HasPrefix(host, "[") || strings.Contains(host, ":") {
		v6 := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		a, err := netip.ParseAddr(v6)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", fmt.Errorf("%w %q: not an IPv6 address", ErrInvalidHost, host)
		}
		return a.String(), nil
	}
	if isPlainHost(host) {
		// The common case, already in its final form: no mapping, no
		// number form (a name ending in a number is not plain).
		return strings.TrimSuffix(host, "."), nil
	}
	decoded, err := percentDecode(host)
	if err != nil {
		return "", fmt.Errorf("%w %q: %v", ErrInvalidHost, host, err)
	}
	if !utf8.ValidString(decoded) || strings.ContainsRune(decoded, utf8.RuneError) {
		return "", fmt.Errorf("%w %q: not UTF-8", ErrInvalidHost, host)
	}
	ascii, err := hostProfile.ToASCII(decoded)
	if err != nil {
		return "", fmt.Errorf("%w %q: %v", ErrInvalidHost, host, err)
	}
	if strings.Contains(ascii, "xn--") {
		// A label it encoded must read back as itself.
		if again, err := hostProfile.ToASCII(ascii); err != nil || again != ascii {
			return "", fmt.Errorf("%w %q: its IDNA form %q is not valid", ErrInvalidHost, host, ascii)
		}
	}
	if i := strings.IndexFunc(ascii, forbiddenDomainRune); i >= 0 {
		return "", fmt.Errorf("%w %q: %q may not appear in a host name", ErrInvalidHost, host, ascii[i:i+1])
	}
	if ascii == "" || ascii == "." {
		return "", fmt.Errorf("%w %q: empty", ErrInvalidHost, host)
	}
	if endsInNumber(ascii) {
		a, err := parseIPv4(ascii)
		if err != nil {
			return "", fmt.Errorf("%w %q: %v", ErrInvalidHost, host, err)
		}
		return a.String(), nil
	}
	ascii = strings.TrimSuffix(ascii, ".")
	if ascii == "" || strings.HasSuffix(ascii, ".") || strings.HasPrefix(ascii, ".") || strings.Contains(ascii, "..") {
		return "", fmt.Errorf("%w %q: an empty label", ErrInvalidHost, host)
	}
	return ascii, nil
}

// isPlainHost reports whether host is lower-case ASCII letters, digits,
// "-" and "." only, with a label that is not a number at the end.
func isPlainHost(host string) bool {
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	h := strings.TrimSuffix(host, ".")
	return h != "" && !strings.HasPrefix(h, ".") && !strings.HasSuffix(h, ".") && !strings.Contains(h, "..") &&
		!strings.Contains(h, "xn--") && !endsInNumber(host)
}

// forbiddenDomainRune reports a forbidden domain code point of the URL
// standard: C0 controls, space, DEL and # % / : < > ? @ [ \ ] ^ |.
func forbiddenDomainRune(r rune) bool {
	return r <= 0x20 || r == 0x7f || strings.ContainsRune("#%/:<>?@[\\]^|", r)
}

// percentDecode decodes %XX escapes; the result must be UTF-8 (ToASCII
// checks it).
func percentDecode(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", errors.New("a bad percent escape")
		}
		v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", errors.New("a bad percent escape")
		}
		b.WriteByte(byte(v))
		i += 2
	}
	return b.String(), nil
}

// endsInNumber is the URL standard's "ends in a number" check: the last
// label (before one trailing dot) is decimal digits or 0x and hex digits.
func endsInNumber(host string) bool {
	labels := strings.Split(host, ".")
	last := labels[len(labels)-1]
	if last == "" && len(labels) > 1 {
		last = labels[len(labels)-2]
	}
	if last == "" {
		return false
	}
	if strings.Trim(last, "0123456789") == "" {
		return true
	}
	hex, ok := strings.CutPrefix(strings.ToLower(last), "0x")
	return ok && strings.Trim(hex, "0123456789abcdef") == ""
}

// parseIPv4 is the URL standard's IPv4 parser: one to four parts, each
// decimal, octal (leading 0) or hex (0x), the last filling the bytes the
// others leave.
func parseIPv4(host string) (netip.Addr, error) {
	parts := strings.Split(host, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return netip.Addr{}, errors.New("more than four parts in an IPv4 address")
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, err := parseIPv4Number(p)
		if err != nil {
			return netip.Addr{}, err
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, errors.New("an IPv4 part over 255")
		}
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, errors.New("an IPv4 address out of range")
	}
	v := last
	for i, n := range nums[:len(nums)-1] {
		v += n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), nil
}

func parseIPv4Number(s string) (uint64, error) {
	if s == "" {
		return 0, errors.New("an empty IPv4 part")
	}
	base := 10
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not an IPv4 number", s)
	}
	return n, nil
}

// URLTarget returns the host:port an http or https URL connects to, its
// host normalised (NormalizeHost) and the scheme's default port filled in.
// The URL is read as the URL standard reads a special URL: tabs and
// newlines are dropped, "\" is "/", any run of slashes may follow the
// scheme, and the host is what follows the last "@" of the authority.
func URLTarget(raw string) (string, error) {
	s := strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, strings.TrimFunc(raw, func(r rune) bool { return r <= 0x20 }))
	scheme, rest, ok := strings.Cut(s, ":")
	if !ok {
		return "", fmt.Errorf("url %q has no scheme; write it as https://HOST/PATH", raw)
	}
	port := ""
	switch strings.ToLower(scheme) {
	case "https":
		port = "443"
	case "http":
		port = "80"
	default:
		return "", fmt.Errorf("url %q: only http and https URLs can be fetched", raw)
	}
	rest = strings.TrimLeft(rest, "/\\")
	authority := rest
	if i := strings.IndexAny(rest, "/\\?#"); i >= 0 {
		authority = rest[:i]
	}
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		authority = authority[i+1:]
	}
	host := authority
	if i := strings.LastIndexByte(authority, ':'); i >= 0 && !strings.Contains(authority[i:], "]") {
		host = authority[:i]
		if p := authority[i+1:]; p != "" {
			n, err := strconv.ParseUint(p, 10, 16)
			if err != nil || strings.Trim(p, "0123456789") != "" {
				return "", fmt.Errorf("url %q: port %q is not a number from 0 to 65535", raw, p)
			}
			port = strconv.FormatUint(n, 10)
		}
	}
	if host == "" {
		return "", fmt.Errorf("url %q has no host", raw)
	}
	h, err := NormalizeHost(host)
	if err != nil {
		return "", fmt.Errorf("url %q: %v", raw, err)
	}
	return joinHostPort(h, port), nil
}

// joinHostPort is net.JoinHostPort: brackets around an IPv6 address.
func joinHostPort(host, port string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}
