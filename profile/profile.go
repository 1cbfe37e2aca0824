package profile

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ErrInvalid is the class of every validation error; errors.Is(err,
// ErrInvalid) holds for each *FieldError.
var ErrInvalid = errors.New("invalid profile")

// FieldError says which field is wrong, what it held and how to fix it.
type FieldError struct {
	Field string // e.g. "filesystem.deny"
	Value string // the offending value
	Fix   string // what to do instead
}

func (e *FieldError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("profile: %s: %s", e.Field, e.Fix)
	}
	return fmt.Sprintf("profile: %s: %q: %s", e.Field, e.Value, e.Fix)
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *FieldError) Unwrap() error { return ErrInvalid }

// Profile is a validated, immutable profile. Build one with New.
type Profile struct {
	spec        Spec
	fingerprint string
	require     Guarantee
}

// New validates s and returns the Profile it describes. Paths are made
// absolute ("~/" against the caller's home, $WORKSPACE against the
// workspace), cleaned, de-duplicated and sorted; the workspace must exist
// and is resolved through symlinks.
func New(s Spec) (*Profile, error) {
	s = s.clone()
	home, _ := os.UserHomeDir()
	if s.Workspace == "" {
		return nil, &FieldError{Field: "workspace", Fix: "set the project directory (--workspace DIR or workspace = \"/abs/path\")"}
	}
	ws, err := absPath("workspace", s.Workspace, home, "")
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(ws)
	if err != nil {
		return nil, &FieldError{Field: "workspace", Value: s.Workspace, Fix: "the directory does not exist; create it or point at an existing project"}
	}
	if !st.IsDir() {
		return nil, &FieldError{Field: "workspace", Value: s.Workspace, Fix: "not a directory; point at the project directory"}
	}
	real, err := filepath.EvalSymlinks(ws)
	if err != nil {
		return nil, &FieldError{Field: "workspace", Value: s.Workspace, Fix: "cannot resolve its symlinks (" + err.Error() + "); point at the project directory itself"}
	}
	ws = real
	if err := checkWorkspace(s.Workspace, ws, home, s.ForceWorkspace); err != nil {
		return nil, err
	}
	s.Workspace = ws

	lists := []struct {
		field string
		list  *[]string
	}{
		{"filesystem.read", &s.Filesystem.Read},
		{"filesystem.write", &s.Filesystem.Write},
		{"filesystem.exec", &s.Filesystem.Exec},
		{"filesystem.sockets", &s.Filesystem.Sockets},
	}
	for _, l := range lists {
		for i, p := range *l.list {
			a, err := absPath(l.field, p, home, ws)
			if err != nil {
				return nil, err
			}
			if err := bindable(l.field, p, a); err != nil {
				return nil, err
			}
			(*l.list)[i] = a
		}
		*l.list = sortedUnique(*l.list)
	}
	for i, g := range s.Filesystem.Deny {
		a, err := denyGlob(g, home, ws)
		if err != nil {
			return nil, err
		}
		if hidesPath(a, ws) {
			return nil, &FieldError{Field: "filesystem.deny", Value: g,
				Fix: "this would hide the workspace " + ws + " itself; deny paths inside it instead"}
		}
		s.Filesystem.Deny[i] = a
	}
	s.Filesystem.Deny = sortedUnique(s.Filesystem.Deny)
	for _, p := range s.Filesystem.Protected {
		c := filepath.Clean(p)
		if p == "" || filepath.IsAbs(p) || c == "." || c == ".." || strings.HasPrefix(c, "../") {
			return nil, &FieldError{Field: "filesystem.protected", Value: p, Fix: "write a path relative to the workspace, like .git/hooks"}
		}
		if err := checkProtectedGlob(p); err != nil {
			return nil, err
		}
	}
	s.Filesystem.Protected = sortedUnique(s.Filesystem.Protected)

	for _, name := range s.Env.Allow {
		if !envVarName(name, true) {
			return nil, &FieldError{Field: "env.allow", Value: name, Fix: "use a variable name, optionally ending in * (LC_*)"}
		}
	}
	s.Env.Allow = sortedUnique(s.Env.Allow)
	for k := range s.Env.Set {
		if !envVarName(k, false) {
			return nil, &FieldError{Field: "env.set", Value: k, Fix: "use a variable name of letters, digits and _"}
		}
	}

	if s.Network.Mode == "" {
		s.Network.Mode = NetworkModeNone
	}
	switch s.Network.Mode {
	case NetworkModeNone:
		if len(s.Network.Allow) > 0 {
			return nil, &FieldError{Field: "network.allow", Value: strings.Join(s.Network.Allow, ","),
				Fix: "an allowlist needs network.mode = \"allow\""}
		}
	case NetworkModeAll:
		// With everything public allowed, entries can only name the
		// private or metadata addresses that stay reachable.
		for i, h := range s.Network.Allow {
			if err := checkHostPort(h); err != nil {
				return nil, &FieldError{Field: "network.allow", Value: h, Fix: err.Error()}
			}
			if !isAddrEntry(h) {
				return nil, &FieldError{Field: "network.allow", Value: h,
					Fix: "with network.mode = \"all\", list only IP literals (the private or metadata addresses to keep reachable); names need mode \"allow\""}
			}
			s.Network.Allow[i] = canonicalEntry(h)
		}
	case NetworkModeAllow:
		if len(s.Network.Allow) == 0 {
			return nil, &FieldError{Field: "network.allow", Fix: "list at least one host[:port], or use mode \"none\""}
		}
		for i, h := range s.Network.Allow {
			if err := checkHostPort(h); err != nil {
				return nil, &FieldError{Field: "network.allow", Value: h, Fix: err.Error()}
			}
			s.Network.Allow[i] = canonicalEntry(h)
		}
	default:
		return nil, &FieldError{Field: "network.mode", Value: s.Network.Mode, Fix: "use none, all or allow"}
	}

	for i, h := range s.Network.Deny {
		if strings.Contains(h, "/") {
			return nil, &FieldError{Field: "network.deny", Value: h, Fix: "write host[:port]; a deny entry covers TCP and UDP"}
		}
		if err := checkHostPort(h); err != nil {
			return nil, &FieldError{Field: "network.deny", Value: h, Fix: err.Error()}
		}
		s.Network.Deny[i] = strings.ToLower(h)
	}
	s.Network.Deny = sortedUnique(s.Network.Deny)
	for i, a := range s.Network.PublishAddresses {
		ip, err := netip.ParseAddr(a)
		if err != nil || ip.Zone() != "" {
			return nil, &FieldError{Field: "network.publish_addresses", Value: a,
				Fix: "write an IP address without a port or zone, like \"0.0.0.0\" (every IPv4 address) or \"192.168.1.5\"; loopback needs no entry"}
		}
		s.Network.PublishAddresses[i] = ip.Unmap().String()
	}
	s.Network.PublishAddresses = sortedUnique(s.Network.PublishAddresses)

	b := s.Budgets
	switch {
	case b.Memory < 0:
		return nil, &FieldError{Field: "budgets.memory", Value: b.Memory.String(), Fix: "use a positive size like 512MiB"}
	case b.Memory != 0 && b.Memory < 4<<20:
		return nil, &FieldError{Field: "budgets.memory", Value: b.Memory.String(), Fix: "at least 4MiB is needed to start a program"}
	case b.Pids < 0:
		return nil, &FieldError{Field: "budgets.pids", Value: fmt.Sprint(b.Pids), Fix: "use a positive number of processes"}
	case b.CPU < 0:
		return nil, &FieldError{Field: "budgets.cpu", Value: fmt.Sprint(b.CPU), Fix: "use a positive number of cores like 1.5"}
	case b.CPU > maxCPU:
		return nil, &FieldError{Field: "budgets.cpu", Value: fmt.Sprint(b.CPU), Fix: fmt.Sprintf("at most %d cores; leave it unset for no CPU limit", maxCPU)}
	case b.WallTime < 0:
		return nil, &FieldError{Field: "budgets.wall_time", Fix: "use a positive duration like 30s"}
	case b.Output < 0:
		return nil, &FieldError{Field: "budgets.output", Fix: "use a positive size like 1MiB"}
	case b.Scratch < 0:
		return nil, &FieldError{Field: "budgets.scratch", Fix: "use a positive size like 256MiB"}
	case b.Scratch != 0 && b.Scratch < minScratch:
		return nil, &FieldError{Field: "budgets.scratch", Value: b.Scratch.String(), Fix: "at least 1MiB; leave it unset for the default"}
	case b.MaxWrite < 0:
		return nil, &FieldError{Field: "budgets.max_write", Fix: "use a positive size like 1GiB"}
	case b.MaxWrite != 0 && b.MaxWrite < minMaxWrite:
		return nil, &FieldError{Field: "budgets.max_write", Value: b.MaxWrite.String(), Fix: "at least 64KiB; leave it unset for no write budget"}
	}

	var req Guarantee
	for _, name := range s.Require {
		g, err := ParseGuarantee(name)
		if err != nil {
			return nil, &FieldError{Field: "require", Value: name, Fix: err.Error()}
		}
		req |= g
	}
	s.Require = nil
	for _, g := range req.List() {
		s.Require = append(s.Require, g.String())
	}

	enc, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("profile: encode for fingerprint: %w", err)
	}
	sum := sha256.Sum256(append([]byte("airlock-profile-v1\n"), enc...))
	return &Profile{spec: s, fingerprint: hex.EncodeToString(sum[:]), require: req}, nil
}

// envVarName reports whether s is a variable name (letters, digits and
// _, not starting with a digit) or, with star, such a name that may end
// in one *. A loop rather than a regexp: compiling two regexps at init
// cost every airlock process about 0.07 ms.
func envVarName(s string, star bool) bool {
	if star {
		s = strings.TrimSuffix(s, "*")
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// absPath makes p absolute: "~/" is the caller's home, $WORKSPACE the
// workspace; anything else relative is an error naming the field.
func absPath(field, p, home, ws string) (string, error) {
	switch {
	case p == WorkspaceToken || strings.HasPrefix(p, WorkspaceToken+"/"):
		if ws == "" {
			return "", &FieldError{Field: field, Value: p, Fix: "$WORKSPACE cannot be used here"}
		}
		p = ws + strings.TrimPrefix(p, WorkspaceToken)
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home == "" {
			return "", &FieldError{Field: field, Value: p, Fix: "HOME is not set; write an absolute path"}
		}
		p = home + strings.TrimPrefix(p, "~")
	}
	if !filepath.IsAbs(p) {
		return "", &FieldError{Field: field, Value: p, Fix: "write an absolute path (or ~/..., or $WORKSPACE/...)"}
	}
	return filepath.Clean(p), nil
}

// denyGlob makes a deny pattern absolute: relative patterns are beneath
// the workspace.
func denyGlob(g, home, ws string) (string, error) {
	if g == "" {
		return "", &FieldError{Field: "filesystem.deny", Fix: "empty pattern; write a path or glob like **/.env"}
	}
	if !filepath.IsAbs(g) && !strings.HasPrefix(g, "~") && !strings.HasPrefix(g, WorkspaceToken) {
		g = ws + "/" + g
	}
	a, err := absPath("filesystem.deny", g, home, ws)
	if err != nil {
		return "", err
	}
	if _, err := filepath.Match(strings.ReplaceAll(a, "**", "*"), ""); err != nil {
		return "", &FieldError{Field: "filesystem.deny", Value: g, Fix: "malformed glob: " + err.Error()}
	}
	return a, nil
}

// checkProtectedGlob refuses a protected entry whose wildcards the
// sandbox cannot hold: "**" is an element of its own ("**/NAME" for a name
// at any depth, "src/**/*.pem" from a deny Edit rule), never part of a
// name, and never the whole workspace (read_only_workspace says that).
func checkProtectedGlob(p string) error {
	if filepath.Clean(p) == "**" {
		return &FieldError{Field: "filesystem.protected", Value: p, Fix: "that is the whole workspace; set read_only_workspace = true"}
	}
	for _, el := range strings.Split(filepath.ToSlash(p), "/") {
		if el != "**" && strings.Contains(el, "**") {
			return &FieldError{Field: "filesystem.protected", Value: p, Fix: "** stands for whole path elements (**/NAME, dir/**/*.pem), not part of a name"}
		}
		if _, err := filepath.Match(el, ""); err != nil {
			return &FieldError{Field: "filesystem.protected", Value: p, Fix: "malformed glob: " + err.Error()}
		}
	}
	return nil
}

// hidesPath reports whether the deny glob matches p or one of p's parents.
func hidesPath(glob, p string) bool {
	for q := p; ; q = filepath.Dir(q) {
		if MatchGlob(glob, q) {
			return true
		}
		if q == "/" {
			return false
		}
	}
}

// checkHostPort is the profile's check of one network.allow entry, so a
// mistake names the field before anything runs; the egress package
// parses the entry fully (egress.ParseRule).
func checkHostPort(entry string) error {
	h, proto := cutProtocol(entry)
	if h == "" {
		return errors.New("empty entry; write host[:port], or host:port/udp for UDP")
	}
	if strings.Contains(h, "/") {
		return errors.New("write host[:port] (TCP) or host:port/udp for UDP, not a URL or a path")
	}
	// UDP has no default ports: 80 and 443 are the web's.
	needsPort := func(host string) error {
		return fmt.Errorf("a UDP entry needs its port; write %s/udp", net.JoinHostPort(host, "PORT"))
	}
	if ap, err := netip.ParseAddrPort(h); err == nil && ap.IsValid() {
		return nil
	}
	if a, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
		if proto == networkUDP {
			return needsPort(a.String())
		}
		return nil
	}
	host, port, hasPort := strings.Cut(h, ":")
	if hasPort && (port == "" || strings.Trim(port, "0123456789") != "") {
		return errors.New("port must be a number like :443")
	}
	if host == "" || strings.ContainsAny(host, "/ @") {
		return errors.New("write a host name, *.suffix or an IP literal, with an optional :port (TCP), or host:port/udp for UDP")
	}
	if !hasPort && proto == networkUDP {
		return needsPort(host)
	}
	return nil
}

// isAddrEntry reports whether an allowlist entry is an IP literal, with
// or without a port and protocol.
func isAddrEntry(entry string) bool {
	h, _ := cutProtocol(entry)
	if _, err := netip.ParseAddrPort(h); err == nil {
		return true
	}
	_, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"))
	return err == nil
}

// The smallest scratch and write budgets: below them no tool runs.
const (
	minScratch  = 1 << 20
	minMaxWrite = 64 << 10
)

// maxCPU bounds the CPU budget: far above any machine, well below what
// the kernel's CFS quota can hold.
const maxCPU = 65536

// bindable refuses read, write and exec entries the sandbox never binds
// from the host: the whole filesystem (sockets, devices and all) and the
// kernel's own trees, which the sandbox gets fresh and minimal.
func bindable(field, value, abs string) error {
	if abs == "/" {
		return &FieldError{Field: field, Value: value, Fix: "that is the whole host filesystem, its sockets and devices included; name the directories the command needs"}
	}
	for _, own := range []string{"/proc", "/sys", "/dev"} {
		if Within(own, abs) {
			return &FieldError{Field: field, Value: value, Fix: "the sandbox has its own " + own + "; the host's is never bound"}
		}
	}
	return nil
}

func sortedUnique(in []string) []string {
	if len(in) == 0 {
		return nil
	}
	sort.Strings(in)
	out := in[:1]
	for _, s := range in[1:] {
		if s != out[len(out)-1] {
			out = append(out, s)
		}
	}
	return out
}
