package tool

import (
	"net"
	"net/url"
	"strings"
)

// defaultPorts are the ports of the URL schemes network commands use.
var defaultPorts = map[string]string{
	"http": "80", "https": "443", "ws": "80", "wss": "443", "ftp": "21", "ftps": "990",
	"sftp": "22", "scp": "22", "ssh": "22", "git+ssh": "22", "ssh+git": "22", "git": "9418",
	"rsync": "873", "telnet": "23", "dict": "2628", "gopher": "70", "gophers": "70",
	"ldap": "389", "ldaps": "636", "imap": "143", "imaps": "993", "pop3": "110", "pop3s": "995",
	"smtp": "25", "smtps": "465", "smb": "445", "smbs": "445", "mqtt": "1883", "rtsp": "554",
	"tftp": "69",
}

// connect adds a network.connect requirement for host and port, in the
// form URLTarget gives (NormalizeHost; IPv6 in brackets). A host that
// fails normalisation is Invalid, which the gate refuses.
func (w *bashWalker) connect(host, port, via string) {
	norm, err := NormalizeHost(host)
	if err != nil {
		host = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
		w.add(Requirement{Kind: KindNetworkConnect, Target: net.JoinHostPort(host, port), Via: via,
			Invalid: "its host is not a valid host name: " + err.Error()})
		return
	}
	w.add(Requirement{Kind: KindNetworkConnect, Target: joinHostPort(norm, port), Via: via})
}

// connectUnresolved adds a network.connect requirement for a word whose
// host or port is only known at run time. It is never allowed without
// asking.
func (w *bashWalker) connectUnresolved(word shWord, via string) {
	text := word.text()
	if text == "" {
		return
	}
	r := Requirement{Kind: KindNetworkConnect, Target: text, Via: via, Unresolved: true}
	if s := word.shape(true); strings.ContainsRune(s, Hole) {
		r.Shape = s
	}
	w.add(r)
}

// unknownHosts stands for hosts a command reads from somewhere the
// preparer cannot see (a file of URLs, links in pages).
func unknownHosts(what string) shWord {
	return shWord{pieces: []piece{{text: "{" + what + "}", expansion: true}}}
}

// urlAuthority splits a URL word into its lower-case scheme (defScheme
// when it has none) and authority, and returns the offset of what
// follows the authority. ok is false when they are not known: the
// authority must end ("/", "?", "#" or the word's end) before any part
// only known at run time.
func urlAuthority(word shWord, defScheme string) (scheme, authority string, end int, ok bool) {
	lp, full := word.knownPrefix(), word.known()
	s, off := lp, 0
	if i := strings.Index(lp, "://"); i >= 0 {
		scheme, s, off = strings.ToLower(lp[:i]), lp[i+3:], i+3
		if scheme == "" || strings.Trim(scheme, "abcdefghijklmnopqrstuvwxyz0123456789+-.") != "" {
			return "", "", 0, false
		}
	} else if defScheme == "" {
		return "", "", 0, false
	} else {
		scheme = defScheme
	}
	n := strings.IndexAny(s, "/?#")
	if n < 0 {
		if !full {
			return "", "", 0, false
		}
		n = len(s)
	}
	return scheme, s[:n], off + n, true
}

// splitAuthority returns the host and port of a URL authority
// ([user@]host[:port]), with defPort when it names none. ok is false for
// an authority with glob characters (curl's {a,b} and [1-3]) or no host.
func splitAuthority(authority, defPort string) (host, port string, ok bool) {
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		authority = authority[i+1:]
	}
	if strings.ContainsAny(authority, "{}*") {
		return "", "", false
	}
	u, err := url.Parse("x://" + authority)
	if err != nil {
		return "", "", false
	}
	host, port = u.Hostname(), u.Port()
	if port == "" {
		port = defPort
	}
	if host == "" || port == "" || strings.ContainsAny(host, "[]") {
		return "", "", false
	}
	return host, port, true
}

// connectURL adds what fetching a URL word needs: a connection to its
// host and port, or for a file: URL a read of its path.
func (w *bashWalker) connectURL(word shWord, defScheme, via string, in dirSet) {
	if word.empty() {
		return
	}
	scheme, authority, end, ok := urlAuthority(word, defScheme)
	if ok && scheme == "file" {
		if authority == "" || strings.EqualFold(authority, "localhost") {
			w.pathRequirements(KindFilesystemRead, word.slice(end), in, via)
			return
		}
		ok = false
	}
	if ok {
		if host, port, ok := splitAuthority(authority, defaultPorts[scheme]); ok {
			w.connect(host, port, via)
			return
		}
	}
	w.connectUnresolved(word, via)
}

// hostPort splits "host", "host:port", "[v6]" or "[v6]:port", with defPort
// when no port is given. A bare IPv6 address has no port.
func hostPort(s, defPort string) (host, port string, ok bool) {
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		s = s[i+1:]
	}
	if h, p, err := net.SplitHostPort(s); err == nil {
		host, port = h, p
	} else {
		host, port = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"), defPort
	}
	if host == "" || port == "" || strings.ContainsAny(host, "[]/{}*?") || strings.Trim(port, "0123456789") != "" {
		return "", "", false
	}
	return host, port, true
}

// connectHostPort adds a connection to a "[user@]host[:port]" word.
func (w *bashWalker) connectHostPort(word shWord, defPort, via string) {
	if text, lit := word.literal(); lit {
		if host, port, ok := hostPort(text, defPort); ok {
			w.connect(host, port, via)
			return
		}
	}
	w.connectUnresolved(word, via)
}

// scpHost reads an scp-style "[user@]host:path" (git, scp, rsync, tar):
// remote when a ":" comes before any "/". decided is false when the known
// text ends before that is clear.
func scpHost(lp string) (host string, remote, decided bool) {
	if b := strings.IndexByte(lp, '['); b >= 0 && !strings.ContainsAny(lp[:b], ":/") {
		if e := strings.Index(lp[b:], "]:"); e >= 0 {
			return lp[b+1 : b+e], true, true
		}
	}
	colon, slash := strings.IndexByte(lp, ':'), strings.IndexByte(lp, '/')
	switch {
	case colon >= 0 && (slash < 0 || colon < slash):
		host = lp[:colon]
		if i := strings.LastIndexByte(host, '@'); i >= 0 {
			host = host[i+1:]
		}
		return host, host != "", true
	case slash >= 0:
		return "", false, true
	}
	return "", false, false
}

// remoteName is the file name curl -O and wget give a download: the last
// segment of the URL's path. ok is false when the URL has none.
func remoteName(u shWord, defScheme string, glob bool) (shWord, bool) {
	_, _, end, ok := urlAuthority(u, defScheme)
	if !ok {
		if strings.Contains(u.knownPrefix(), "://") || !u.known() {
			return shWord{pieces: []piece{{text: u.base().text(), wild: true}}}, true
		}
		return shWord{}, false
	}
	path := u.slice(end)
	var kept []piece
	for _, p := range path.pieces {
		if !p.expansion && !p.wild {
			if i := strings.IndexAny(p.text, "?#"); i >= 0 {
				if p.text = p.text[:i]; p.text != "" {
					kept = append(kept, p)
				}
				break
			}
		}
		kept = append(kept, p)
	}
	path = shWord{pieces: kept}
	if t, lit := path.literal(); lit && (t == "" || strings.HasSuffix(t, "/")) {
		return shWord{}, false
	}
	name := path.base()
	if text, lit := name.literal(); !lit || glob && strings.ContainsAny(text, "[]{}") {
		// Only known when it runs, or one of curl's URL globs.
		return shWord{pieces: []piece{{text: name.text(), wild: true}}}, true
	}
	return name, true
}
