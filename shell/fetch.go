package shell

import (
	"slices"
	"strings"

	"github.com/airlockhq/airlock/tool"
)

// curlSpec: curl's options that take an argument. curl wants long options
// written in full.
var curlSpec = optSpec{short: "AbcCdDeEFHKmoPQrtTuUwxXyYz", exact: true, long: []string{
	"abstract-unix-socket", "alt-svc", "aws-sigv4", "cacert", "capath", "cert", "cert-type", "ciphers",
	"config", "connect-timeout", "connect-to", "continue-at", "cookie", "cookie-jar", "create-file-mode",
	"crlfile", "curves", "data", "data-ascii", "data-binary", "data-raw", "data-urlencode", "delegation",
	"dns-interface", "dns-ipv4-addr", "dns-ipv6-addr", "dns-servers", "doh-url", "dump-header", "ech",
	"egd-file", "engine", "etag-compare", "etag-save", "expect100-timeout", "form", "form-string",
	"ftp-account", "ftp-alternative-to-user", "ftp-method", "ftp-port", "ftp-ssl-ccc-mode",
	"happy-eyeballs-timeout-ms", "haproxy-clientip", "header", "help", "hostpubmd5", "hostpubsha256",
	"hsts", "interface", "ip-tos", "ipfs-gateway", "json", "keepalive-cnt", "keepalive-time", "key",
	"key-type", "krb", "libcurl", "limit-rate", "local-port", "login-options", "mail-auth", "mail-from",
	"mail-rcpt", "max-filesize", "max-redirs", "max-time", "netrc-file", "noproxy", "oauth2-bearer",
	"output", "output-dir", "parallel-max", "pass", "pinnedpubkey", "preproxy", "proto", "proto-default",
	"proto-redir", "proxy", "proxy-cacert", "proxy-capath", "proxy-cert", "proxy-cert-type",
	"proxy-ciphers", "proxy-crlfile", "proxy-header", "proxy-key", "proxy-key-type", "proxy-pass",
	"proxy-pinnedpubkey", "proxy-service-name", "proxy-tls13-ciphers", "proxy-tlsauthtype",
	"proxy-tlspassword", "proxy-tlsuser", "proxy-user", "proxy1.0", "pubkey", "quote", "random-file",
	"range", "rate", "referer", "request", "request-target", "resolve", "retry", "retry-delay",
	"retry-max-time", "sasl-authzid", "service-name", "socks4", "socks4a", "socks5",
	"socks5-gssapi-service", "socks5-hostname", "speed-limit", "speed-time", "stderr", "telnet-option",
	"time-cond", "tls-max", "tls13-ciphers", "tlsauthtype", "tlspassword", "tlsuser", "trace",
	"trace-ascii", "trace-config", "unix-socket", "upload-file", "url", "url-query", "user",
	"user-agent", "variable", "write-out",
}}

// curlOperands: curl connects to each URL's host (and to a proxy), writes
// -o files and, for -O, the URL's last path segment (or with -J a name
// the server picks) into --output-dir, reads files it uploads, and writes
// the files its options name for cookies, headers and traces.
func curlOperands(w *bashWalker, name string, args []shWord, in dirSet) {
	args = slices.Clone(args)
	for i, a := range args {
		// "--expand-NAME" is NAME with {{variables}} expanded.
		if lp := a.knownPrefix(); strings.HasPrefix(lp, "--expand-") {
			args[i] = shWord{pieces: append([]piece{{text: "--"}}, a.slice(len("--expand-")).pieces...)}
		}
	}
	parsed := curlSpec.parse(args)
	defScheme, glob := "http", !has(parsed, "-g", "--globoff")
	for _, v := range values(parsed, "--proto-default") {
		if t, ok := v.literal(); ok {
			defScheme = strings.ToLower(t)
		}
	}
	outDir := values(parsed, "--output-dir")
	inDir := func(file shWord) shWord {
		if len(outDir) > 0 {
			return joinWords(outDir[len(outDir)-1], file)
		}
		return file
	}
	type output struct {
		file   shWord
		remote bool
	}
	var urls []shWord
	var outs []output
	for _, a := range parsed {
		switch a.opt {
		case "", "--url":
			urls = append(urls, a.value)
		case "-o", "--output":
			outs = append(outs, output{file: a.value})
		case "-O", "--remote-name":
			outs = append(outs, output{remote: true})
		}
	}
	for i, u := range urls {
		w.connectURL(u, defScheme, name, in)
		if !(i < len(outs) && outs[i].remote || i >= len(outs) && has(parsed, "--remote-name-all")) {
			continue
		}
		file, ok := remoteName(u, defScheme, glob)
		if has(parsed, "-J", "--remote-header-name") {
			file, ok = shWord{pieces: []piece{{text: "{name from the server}", wild: true}}}, true
		}
		if ok {
			w.pathRequirements(tool.KindFilesystemWrite, inDir(file), in, name)
		}
	}
	for _, o := range outs {
		if t, _ := o.file.literal(); o.remote || t == "-" {
			continue
		}
		file := o.file
		if glob {
			for d := '1'; d <= '9'; d++ {
				ref := "#" + string(d) // "#1": the text the first URL glob matched
				file = replacePieces(file, ref, []piece{{text: ref, expansion: true}})
			}
		}
		w.pathRequirements(tool.KindFilesystemWrite, inDir(file), in, name)
	}
	for _, a := range parsed {
		if !a.hasValue {
			continue
		}
		v, lp := a.value, a.value.knownPrefix()
		switch a.opt {
		case "-x", "--proxy", "--preproxy", "--socks4", "--socks4a", "--socks5", "--socks5-hostname":
			w.connectProxy(v, name)
		case "--resolve", "--connect-to":
			w.connectOverride(a.opt, v, name)
		case "-T", "--upload-file":
			if t, _ := v.literal(); t != "." {
				w.pathRequirements(tool.KindFilesystemRead, v, in, name)
			}
		case "-d", "--data", "--data-binary", "--data-ascii", "--json", "--data-urlencode":
			at := strings.IndexByte(lp, '@')
			if at == 0 || a.opt == "--data-urlencode" && at > 0 && !strings.Contains(lp[:at], "=") {
				w.pathRequirements(tool.KindFilesystemRead, v.slice(at+1), in, name)
			}
		case "-F", "--form":
			if _, val, ok := strings.Cut(lp, "="); ok && (strings.HasPrefix(val, "@") || strings.HasPrefix(val, "<")) {
				file := v.slice(len(lp) - len(val) + 1)
				if t, lit := file.literal(); lit {
					file = literalWord(strings.SplitN(t, ";", 2)[0])
				}
				w.pathRequirements(tool.KindFilesystemRead, file, in, name)
			}
		case "-b", "--cookie":
			if v.known() && !strings.Contains(lp, "=") {
				w.pathRequirements(tool.KindFilesystemRead, v, in, name)
			}
		case "-K", "--config":
			w.pathRequirements(tool.KindFilesystemRead, v, in, name)
			w.connectUnresolved(unknownHosts("URLs in "+v.text()), name)
		case "-c", "--cookie-jar", "-D", "--dump-header", "--trace", "--trace-ascii", "--stderr",
			"--libcurl", "--etag-save", "--hsts", "--alt-svc", "--unix-socket":
			// Connecting to a unix socket needs write access to it.
			w.pathRequirements(tool.KindFilesystemWrite, v, in, name)
		}
	}
}

// connectProxy adds a connection to a proxy given as [scheme://]host[:port];
// curl's default proxy port is 1080 (443 for an https proxy).
func (w *bashWalker) connectProxy(word shWord, via string) {
	if word.empty() {
		return // -x "": no proxy
	}
	scheme, authority, _, ok := urlAuthority(word, "http")
	port := "1080"
	if scheme == "https" {
		port = "443"
	}
	if ok {
		if host, port, ok := splitAuthority(authority, port); ok {
			w.connect(host, port, via)
			return
		}
	}
	w.connectUnresolved(word, via)
}

// connectOverride adds the address curl --resolve HOST:PORT:ADDR[,ADDR]
// or --connect-to HOST:PORT:HOST2:PORT2 sends a connection to instead.
func (w *bashWalker) connectOverride(opt string, word shWord, via string) {
	text, lit := word.literal()
	if !lit {
		w.connectUnresolved(word, via)
		return
	}
	text = strings.TrimPrefix(text, "+")
	if strings.HasPrefix(text, "-") {
		return // removes an entry
	}
	parts := strings.SplitN(text, ":", 3)
	if len(parts) < 3 {
		return // curl rejects it
	}
	if opt == "--resolve" {
		for _, addr := range strings.Split(parts[2], ",") {
			w.connectHostPort(literalWord(net2(addr, parts[1])), "", via)
		}
		return
	}
	host, port := parts[2], parts[1]
	if i := strings.LastIndexByte(parts[2], ':'); i >= 0 && !strings.HasSuffix(parts[2], "]") {
		host, port = parts[2][:i], parts[2][i+1:]
	}
	if host == "" {
		host = parts[0]
	}
	if port == "" {
		port = parts[1]
	}
	w.connectHostPort(literalWord(net2(host, port)), "", via)
}

// net2 joins a host (perhaps a bracketed IPv6 address) and a port.
func net2(host, port string) string {
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		host = "[" + host + "]"
	}
	return host + ":" + port
}

var wgetSpec = optSpec{short: "eoaiBtOTwQPUlARDIXn", long: []string{
	"output-document", "directory-prefix", "output-file", "append-output", "input-file", "execute",
	"base", "tries", "timeout", "wait", "quota", "user-agent", "level", "accept", "reject", "domains",
	"exclude-domains", "include-directories", "exclude-directories", "header", "user", "password",
	"http-user", "http-password", "ftp-user", "ftp-password", "proxy-user", "proxy-password",
	"post-data", "post-file", "body-data", "body-file", "method", "referer", "load-cookies",
	"save-cookies", "certificate", "certificate-type", "private-key", "private-key-type",
	"ca-certificate", "ca-directory", "crl-file", "bind-address", "limit-rate", "dns-timeout",
	"connect-timeout", "read-timeout", "waitretry", "cut-dirs", "default-page", "restrict-file-names",
	"config", "secure-protocol", "progress", "backups", "retry-on-http-error", "local-encoding",
	"remote-encoding", "accept-regex", "reject-regex", "regex-type", "follow-tags", "ignore-tags",
	"max-redirect", "pinnedpubkey", "random-file", "egd-file", "hsts-file", "warc-file", "warc-header",
	"warc-max-size", "warc-dedup", "warc-tempdir", "report-speed", "prefer-family", "use-askpass",
	"rejected-log", "ciphers", "input-metalink", "metalink-index", "preferred-location",
}, flags: []string{"recursive", "mirror", "page-requisites", "force-directories", "span-hosts",
	"content-disposition", "trust-server-names", "spider"}}

// wgetOperands: wget connects to each URL's host and writes -O FILE, or
// else each download into -P DIR (the working directory) under the URL's
// last path segment ("index.html" when it has none); a recursive download
// writes anything below DIR.
func wgetOperands(w *bashWalker, name string, args []shWord, in dirSet) {
	parsed := wgetSpec.parse(args)
	dir := literalWord(".")
	if d := values(parsed, "-P", "--directory-prefix"); len(d) > 0 {
		dir = d[len(d)-1]
	}
	spider := has(parsed, "--spider")
	recursive := has(parsed, "-r", "--recursive", "-m", "--mirror", "-p", "--page-requisites", "-x", "--force-directories")
	single := !spider && !recursive && len(values(parsed, "-O", "--output-document")) == 0
	for _, u := range operands(parsed) {
		w.connectURL(u, "http", name, in)
		if !single {
			continue
		}
		file, ok := remoteName(u, "http", false)
		if !ok {
			file = literalWord("index.html")
		}
		if has(parsed, "--content-disposition", "--trust-server-names") {
			file = shWord{pieces: []piece{{text: "{name from the server}", wild: true}}}
		}
		w.pathRequirements(tool.KindFilesystemWrite, joinWords(dir, file), in, name)
	}
	if recursive && !spider {
		w.pathRequirements(tool.KindFilesystemWrite, dir, in, name)
		if has(parsed, "-H", "--span-hosts") {
			w.connectUnresolved(unknownHosts("hosts the pages link to"), name)
		}
	}
	for _, f := range values(parsed, "-O", "--output-document", "-o", "--output-file", "-a",
		"--append-output", "--save-cookies", "--hsts-file", "--rejected-log") {
		w.pathRequirements(tool.KindFilesystemWrite, f, in, name)
	}
	for _, f := range values(parsed, "--post-file", "--body-file", "--load-cookies") {
		w.pathRequirements(tool.KindFilesystemRead, f, in, name)
	}
	for _, f := range values(parsed, "-i", "--input-file") {
		if strings.Contains(f.knownPrefix(), "://") {
			w.connectURL(f, "http", name, in)
		} else {
			w.pathRequirements(tool.KindFilesystemRead, f, in, name)
		}
		w.connectUnresolved(unknownHosts("URLs in "+f.text()), name)
	}
}

// ncPrograms: traditional netcat runs -e PROGRAM and -c COMMAND (through
// /bin/sh); ncat runs -e/--exec COMMAND (split into words), -c/--sh-exec
// COMMAND (through /bin/sh) and --lua-exec FILE. OpenBSD's nc reads -c as
// a flag, but which nc runs is not known, so the word after -c counts as
// a command too.
func (w *bashWalker) ncPrograms(name string, args []shWord, parsed []arg, in dirSet) {
	if name == "ncat" {
		for _, a := range parsed {
			switch a.opt {
			case "-e", "--exec", "-c", "--sh-exec":
				w.runLater(program{word: a.value, shell: true, via: name + " " + a.opt}, in)
			case "--lua-exec":
				w.runLater(program{word: a.value, via: name + " " + a.opt}, in)
			}
		}
		return
	}
	for _, e := range values(parsed, "-e") {
		w.runLater(program{word: e, via: name + " -e"}, in)
	}
	spec := ncSpecs.get()[name]
	spec.short += "c"
	for _, c := range values(spec.parse(args), "-c") {
		w.runLater(program{word: c, shell: true, via: name + " -c"}, in)
	}
}

var ncSpecs = table[map[string]optSpec]{build: func() map[string]optSpec {
	return map[string]optSpec{
		"nc":     {short: "IiMmOPpqsTVwXxe", exact: true},
		"netcat": {short: "IiMmOPpqsTVwXxe", exact: true},
		"ncat": {short: "ceGgmdoxispw", exact: true, long: []string{"exec", "sh-exec", "lua-exec", "proxy",
			"proxy-type", "proxy-auth", "proxy-dns", "source", "source-port", "wait", "idle-timeout",
			"output", "hex-dump", "max-conns", "allow", "allowfile", "deny", "denyfile", "ssl-cert",
			"ssl-key", "ssl-trustfile", "ssl-ciphers", "ssl-servername", "ssl-alpn", "delay"}},
	}
}}

// ncOperands: nc HOST PORT... connects to each port (ncat's default is
// 31337), and to a proxy (-x for nc, --proxy for ncat); -U connects to a
// unix socket, which needs write access to it; -l listens.
func ncOperands(w *bashWalker, name string, args []shWord, in dirSet) {
	parsed := ncSpecs.get()[name].parse(args)
	ops := operands(parsed)
	w.ncPrograms(name, args, parsed, in)
	if name == "ncat" {
		for _, f := range values(parsed, "-o", "--output", "-x", "--hex-dump") {
			w.pathRequirements(tool.KindFilesystemWrite, f, in, name)
		}
		for _, p := range values(parsed, "--proxy") {
			port := "3128"
			for _, t := range values(parsed, "--proxy-type") {
				if s, _ := t.literal(); strings.HasPrefix(s, "socks") {
					port = "1080"
				}
			}
			w.connectHostPort(p, port, name)
		}
	} else {
		for _, p := range values(parsed, "-x") {
			port := "1080"
			for _, t := range values(parsed, "-X") {
				if s, _ := t.literal(); s == "connect" {
					port = "3128"
				}
			}
			w.connectHostPort(p, port, name)
		}
	}
	if has(parsed, "-U", "--unixsock") {
		if len(ops) > 0 {
			w.pathRequirements(tool.KindFilesystemWrite, ops[0], in, name)
		}
		return
	}
	if has(parsed, "-l", "--listen") || len(ops) == 0 {
		return
	}
	ports := ops[1:]
	if len(ports) == 0 && !ops[0].known() {
		w.connectUnresolved(ops[0], name) // host and port may both be in it
		return
	}
	if len(ports) == 0 && name == "ncat" {
		ports = []shWord{literalWord("31337")}
	}
	for _, p := range ports {
		hp := shWord{pieces: append(append(append([]piece(nil), ops[0].pieces...), piece{text: ":", quoted: true}), p.pieces...)}
		if h, _ := ops[0].literal(); strings.Contains(h, ":") && p.known() {
			hp = literalWord(net2(h, p.text()))
		}
		w.connectHostPort(hp, "", name)
	}
}
