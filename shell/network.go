package shell

import (
	"net"
	"net/url"
	"strings"

	"github.com/airlockhq/airlock/tool"
)

// defaultPorts are the ports of the URL schemes network commands use.
var defaultPorts = table[map[string]string]{build: func() map[string]string {
	return map[string]string{
		"http": "80", "https": "443", "ws": "80", "wss": "443", "ftp": "21", "ftps": "990",
		"sftp": "22", "scp": "22", "ssh": "22", "git+ssh": "22", "ssh+git": "22", "git": "9418",
		"rsync": "873", "telnet": "23", "dict": "2628", "gopher": "70", "gophers": "70",
		"ldap": "389", "ldaps": "636", "imap": "143", "imaps": "993", "pop3": "110", "pop3s": "995",
		"smtp": "25", "smtps": "465", "smb": "445", "smbs": "445", "mqtt": "1883", "rtsp": "554",
		"tftp": "69",
	}
}}

// connect adds a network.connect requirement for host and port, in the
// form URLTarget gives (NormalizeHost; IPv6 in brackets). A host that
// fails normalisation is Invalid, which the gate refuses.
func (w *bashWalker) connect(host, port, via string) {
	norm, err := tool.NormalizeHost(host)
	if err != nil {
		host = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
		w.add(tool.Requirement{Kind: tool.KindNetworkConnect, Target: net.JoinHostPort(host, port), Via: via,
			Invalid: "its host is not a valid host name: " + err.Error()})
		return
	}
	w.add(tool.Requirement{Kind: tool.KindNetworkConnect, Target: net.JoinHostPort(norm, port), Via: via})
}

// connectUnresolved adds a network.connect requirement for a word whose
// host or port is only known at run time. It is never allowed without
// asking.
func (w *bashWalker) connectUnresolved(word shWord, via string) {
	text := word.text()
	if text == "" {
		return
	}
	r := tool.Requirement{Kind: tool.KindNetworkConnect, Target: text, Via: via, Unresolved: true}
	if s := word.shape(true); strings.ContainsRune(s, tool.Hole) {
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
			w.pathRequirements(tool.KindFilesystemRead, word.slice(end), in, via)
			return
		}
		ok = false
	}
	if ok {
		if host, port, ok := splitAuthority(authority, defaultPorts.get()[scheme]); ok {
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
