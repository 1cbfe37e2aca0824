package profile

import (
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
)

// Access is what a profile gives one requirement before any rule is read:
// the first step of the gate's decision order.
type Access int

const (
	// AccessDeny: the profile forbids the requirement; no rule or person can
	// allow it.
	AccessDeny Access = iota
	// AccessGated: the profile leaves it to the rules, then to an approver.
	AccessGated
	// AccessAllow: the profile allows it; deny and ask rules still apply.
	AccessAllow
)

func (a Access) String() string {
	switch a {
	case AccessDeny:
		return "deny"
	case AccessGated:
		return "gated"
	case AccessAllow:
		return "allow"
	}
	return "unknown"
}

// Requirement kinds the profile knows. Other kinds are denied.
const (
	KindCommandExecute  = "command.execute"
	KindFilesystemRead  = "filesystem.read"
	KindFilesystemWrite = "filesystem.write"
	KindNetworkConnect  = "network.connect"
	KindToolInvoke      = "tool.invoke"
)

// Access says what the profile gives one requirement (kind, target) before
// any rule is read. Filesystem targets are absolute paths (relative ones
// are taken against the workspace); network targets are host:port.
func (p *Profile) Access(kind, target string) Access {
	switch kind {
	case KindCommandExecute:
		if on, _ := p.AutoAllowInSandbox(); on {
			return AccessAllow
		}
		return AccessGated
	case KindFilesystemRead:
		path := p.resolve(target)
		if p.Denied(path) {
			return AccessDeny
		}
		if p.CanRead(path) {
			return AccessAllow
		}
		return AccessDeny
	case KindFilesystemWrite:
		path := p.resolve(target)
		if p.Denied(path) {
			return AccessDeny
		}
		if p.IsProtected(path) {
			return AccessGated
		}
		if p.CanWrite(path) {
			return AccessAllow
		}
		return AccessDeny
	case KindNetworkConnect:
		return p.networkAccess(target)
	case KindToolInvoke:
		return AccessGated
	}
	return AccessDeny
}

// AutoAllowInSandbox returns the profile's auto_allow_in_sandbox: on, and
// set when a layer wrote it. Access allows commands only when it is on;
// a surface that runs every command in the sandbox allows them also when
// it is not set (package workspace).
func (p *Profile) AutoAllowInSandbox() (on, set bool) {
	if p.spec.AutoAllowInSandbox == nil {
		return false, false
	}
	return *p.spec.AutoAllowInSandbox, true
}

func (p *Profile) resolve(target string) string {
	if target == "" {
		return p.spec.Workspace
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(p.spec.Workspace, target)
	}
	return filepath.Clean(target)
}

// Denied reports whether a deny glob matches path or one of its parents.
func (p *Profile) Denied(path string) bool {
	for _, g := range p.spec.Filesystem.Deny {
		if hidesPath(g, path) {
			return true
		}
	}
	return false
}

// DeniedBeneath returns a deny glob that matches dir, one of its parents
// or anything beneath it, or "". A read of the whole tree at dir (a search,
// an archive) would return what that glob hides, so the gate denies it;
// the sandbox hides the same files with masks instead.
func (p *Profile) DeniedBeneath(dir string) string {
	dir = p.resolve(dir)
	var parts []string
	for _, g := range p.spec.Filesystem.Deny {
		// Most globs' literal start is not on dir's path either way.
		root := g
		if i := strings.IndexAny(g, "*?["); i >= 0 {
			root = filepath.Dir(g[:i+1])
		}
		if !Within(root, dir) && !Within(dir, root) {
			continue
		}
		if parts == nil {
			parts = splitPath(dir)
		}
		if hidesPath(g, dir) || globBeneath(splitPath(g), parts) {
			return g
		}
	}
	return ""
}

// globBeneath reports whether the glob's parts can match a path strictly
// beneath the one parts names.
func globBeneath(pat, parts []string) bool {
	for len(parts) > 0 {
		if len(pat) == 0 {
			return false
		}
		if pat[0] == "**" {
			return true
		}
		if ok, err := filepath.Match(pat[0], parts[0]); err != nil || !ok {
			return false
		}
		pat, parts = pat[1:], parts[1:]
	}
	return len(pat) > 0
}

// ProtectedBeneath reports whether a protected path of the workspace (or
// the hooks directory its git config names) is dir or lies beneath it: a
// write of the whole tree at dir (rm -r, mv, an extraction) can change it.
func (p *Profile) ProtectedBeneath(dir string) bool {
	dir = p.resolve(dir)
	if p.IsProtected(dir) {
		return true
	}
	var parts []string
	if dir != p.spec.Workspace {
		rel, ok := strings.CutPrefix(dir, p.spec.Workspace+"/")
		if !ok {
			return false
		}
		parts = splitPath(rel)
	}
	entries := p.spec.Filesystem.Protected
	if hooks := GitHooksPath(p.spec.Workspace); hooks != "" {
		entries = append(entries[:len(entries):len(entries)], hooks)
	}
	for _, entry := range entries {
		if globBeneath(splitPath(filepath.Clean(entry)), parts) {
			return true
		}
	}
	return false
}

// IsProtected reports whether path is, or is beneath, one of the protected
// paths of the workspace. An entry's * and ? match within one name, as in
// the sandbox, which protects every match (.git/modules/*/hooks).
func (p *Profile) IsProtected(path string) bool {
	rel, ok := strings.CutPrefix(path, p.spec.Workspace+"/")
	if !ok {
		return false
	}
	parts := splitPath(rel)
	if hooks := GitHooksPath(p.spec.Workspace); hooks != "" && Within(hooks, rel) {
		return true // the hooks git runs, wherever the config puts them
	}
	for _, entry := range p.spec.Filesystem.Protected {
		pat := splitPath(filepath.Clean(entry))
		if len(parts) >= len(pat) && matchParts(pat, parts[:len(pat)]) {
			return true
		}
	}
	return false
}

// CanRead reports whether path is beneath a readable path (ignoring deny).
func (p *Profile) CanRead(path string) bool {
	if Within(p.spec.Workspace, path) {
		return true
	}
	for _, r := range append(p.spec.Filesystem.Read, p.spec.Filesystem.Write...) {
		if Within(r, path) {
			return true
		}
	}
	return false
}

// CanWrite reports whether path is beneath a writable path (ignoring deny
// and protection).
func (p *Profile) CanWrite(path string) bool {
	if !p.spec.ReadOnlyWorkspace && Within(p.spec.Workspace, path) {
		return true
	}
	for _, w := range p.spec.Filesystem.Write {
		if Within(w, path) {
			return true
		}
	}
	return false
}

// Within reports whether the clean absolute path is dir or beneath it.
func Within(dir, path string) bool {
	// No dir+"/": this runs per path and glob in hot loops.
	return path == dir || dir == "/" ||
		len(path) > len(dir) && path[len(dir)] == '/' && strings.HasPrefix(path, dir)
}

func (p *Profile) networkAccess(target string) Access {
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		host = strings.Trim(target, "[]")
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		if IsPrivateAddr(addr) && !p.allowsLiteral(target) {
			return AccessDeny
		}
	}
	if isBlockedName(host) {
		return AccessDeny
	}
	switch p.spec.Network.Mode {
	case NetworkModeAll:
		return AccessAllow
	case NetworkModeAllow:
		if p.allowsHost(target) {
			return AccessAllow
		}
	}
	return AccessGated
}

// isBlockedName reports whether host is a name for this machine (localhost,
// *.localhost: RFC 6761) or for a cloud metadata service, in any case and
// with or without the root's trailing dot. The gate sees names, not the
// addresses they resolve to, so these are denied like their addresses.
func isBlockedName(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	return h == "localhost" || strings.HasSuffix(h, ".localhost") ||
		h == "metadata.google.internal" || h == "metadata"
}

func (p *Profile) allowsLiteral(target string) bool {
	for _, a := range p.spec.Network.Allow {
		if a == target {
			return true
		}
	}
	return false
}

// allowsHost is a coarse check for the gate (the egress layer enforces):
// an entry matches the same host, or *.suffix, with the same port or no
// port in the entry.
func (p *Profile) allowsHost(target string) bool {
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		host, port = target, ""
	}
	for _, a := range p.spec.Network.Allow {
		if strings.HasSuffix(a, "/udp") {
			continue // network.connect is TCP; a UDP entry never allows it
		}
		ah, ap, err := net.SplitHostPort(a)
		if err != nil {
			ah, ap = strings.Trim(a, "[]"), ""
		}
		if ap != "" && ap != port {
			continue
		}
		if ap == "" && port != "" && port != "80" && port != "443" {
			continue
		}
		if strings.EqualFold(ah, host) || (strings.HasPrefix(ah, "*.") && strings.HasSuffix(strings.ToLower(host), strings.ToLower(ah[1:]))) {
			return true
		}
	}
	return false
}

// IsPrivateAddr reports whether addr is loopback, private (RFC 1918, ULA),
// link-local, CGNAT, multicast, unspecified or a cloud metadata address.
func IsPrivateAddr(addr netip.Addr) bool {
	addr = addr.Unmap()
	if IsMetadataAddr(addr) {
		return true
	}
	if addr.IsLoopback() || addr.IsPrivate() || addr.IsLinkLocalUnicast() ||
		addr.IsLinkLocalMulticast() || addr.IsMulticast() || addr.IsUnspecified() ||
		addr.IsInterfaceLocalMulticast() {
		return true
	}
	for _, pfx := range blockedPrefixes {
		if pfx.Contains(addr) {
			return true
		}
	}
	return false
}

// metadataAddrs are the cloud instance-metadata endpoints. All but Azure's
// WireServer are inside a private range already; they are listed so that
// a refusal can say "cloud metadata" rather than "link-local".
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure IMDS, OpenStack, ...
	netip.MustParseAddr("169.254.170.2"),   // AWS ECS task metadata
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
	netip.MustParseAddr("168.63.129.16"),   // Azure WireServer (a public address)
	netip.MustParseAddr("fd00:ec2::254"),   // AWS IMDS over IPv6
}

// IsMetadataAddr reports whether addr (or the IPv4 address it maps) is a
// cloud instance-metadata endpoint.
func IsMetadataAddr(addr netip.Addr) bool {
	return slices.Contains(metadataAddrs, addr.Unmap())
}

var blockedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("100.64.0.0/10"),  // CGNAT (100.100.100.200 is Alibaba's metadata)
	netip.MustParsePrefix("169.254.0.0/16"), // link-local, cloud metadata
	netip.MustParsePrefix("0.0.0.0/8"),      // "this network"
	netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),    // reserved
	netip.MustParsePrefix("64:ff9b::/96"),   // NAT64 can reach private IPv4
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64 (RFC 8215), likewise
	netip.MustParsePrefix("2002::/16"),      // 6to4 (deprecated): embeds any IPv4 address
	netip.MustParsePrefix("2001::/32"),      // Teredo (deprecated): likewise
}
