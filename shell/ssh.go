package shell

import (
	"strings"

	"github.com/airlockhq/airlock/tool"
)

var sftpSpec = optSpec{short: "BbcDFiJloPRSs", exact: true}

// sftpPrograms: sftp passes -o to ssh, runs -S PROGRAM instead of ssh and
// -D COMMAND as a local server.
func sftpPrograms(w *bashWalker, name string, args []shWord, in dirSet) {
	parsed := sftpSpec.parse(args)
	for _, s := range values(parsed, "-S") {
		w.runLater(program{word: s, via: name + " -S"}, in)
	}
	for _, d := range values(parsed, "-D") {
		w.runLater(program{word: d, shell: true, via: name + " -D"}, in)
	}
	w.sshOptionPrograms(values(parsed, "-o"), nil, in)
}

// sshOptionPrograms adds the commands of ssh's -o ProxyCommand,
// LocalCommand (with PermitLocalCommand, which a configuration file may
// set) and KnownHostsCommand. tokens replaces their %h, %p, ... when the
// destination is known.
func (w *bashWalker) sshOptionPrograms(opts []shWord, tokens *strings.Replacer, in dirSet) {
	for _, o := range opts {
		key, value, ok := sshOption(o)
		if !ok {
			if !o.known() {
				// "-o $opt": it may be ProxyCommand=anything.
				w.dataUnknown(o.text(), "ssh -o")
			}
			continue
		}
		key = strings.ToLower(key)
		if sshCommandKeys.get()[key] == "" {
			continue
		}
		if t, lit := value.literal(); lit {
			if t == "none" && key == "proxycommand" {
				continue
			}
			if tokens != nil && strings.Count(t, "%") <= 32 {
				value = literalWord(tokens.Replace(t))
			}
		}
		w.runLater(program{word: value, shell: true, via: "ssh -o " + sshCommandKeys.get()[key]}, in)
	}
}

// sshCommandKeys are ssh's options whose value is a command line run
// here, by their lower-case names.
var sshCommandKeys = table[map[string]string]{build: func() map[string]string {
	return map[string]string{"proxycommand": "ProxyCommand", "localcommand": "LocalCommand",
		"knownhostscommand": "KnownHostsCommand"}
}}

// sshOption splits an ssh -o argument, "Key=value" or "Key value", when
// its key is known.
func sshOption(o shWord) (key string, value shWord, ok bool) {
	lp := o.knownPrefix()
	i := strings.IndexAny(lp, "= \t")
	if i <= 0 {
		return "", shWord{}, false
	}
	j := i
	for j < len(lp) && (lp[j] == ' ' || lp[j] == '\t') {
		j++
	}
	if j < len(lp) && lp[j] == '=' {
		j++
		for j < len(lp) && (lp[j] == ' ' || lp[j] == '\t') {
			j++
		}
	}
	return lp[:i], o.slice(j), true
}

// sshTokens replaces the tokens of ProxyCommand (%h, %p, %n, %r, %%) with
// the destination's host, port and user, when they are plain names.
func sshTokens(dest, host, port, user string) *strings.Replacer {
	// A host name has at most 253 bytes: the text cannot grow much.
	plain := func(s string) bool {
		return s != "" && len(s) <= 253 &&
			strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_:[]") == ""
	}
	if !plain(host) || !plain(dest) || strings.Trim(port, "0123456789") != "" || port == "" || len(port) > 5 {
		return nil
	}
	pairs := []string{"%%", "%", "%h", host, "%p", port, "%n", dest}
	if plain(user) {
		pairs = append(pairs, "%r", user)
	}
	return strings.NewReplacer(pairs...)
}

// sshDestTokens are the tokens of an ssh destination written
// [user@]host, with the HostName and port options gave.
func sshDestTokens(dest shWord, hostName *shWord, port string) *strings.Replacer {
	d, lit := dest.literal()
	if !lit || strings.Contains(d, "://") {
		return nil
	}
	user, host := "", d
	if at := strings.LastIndexByte(d, '@'); at >= 0 {
		user, host = d[:at], d[at+1:]
	}
	target := host
	if hostName != nil {
		if target, lit = hostName.literal(); !lit {
			return nil
		}
	}
	return sshTokens(host, target, port, user)
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

var sshSpec = optSpec{short: "BbcDEeFIiJLlmOoPpQRSWw", exact: true, inOrder: true}

// sshOperands: ssh connects to its destination (ssh://host:port or
// [user@]host with -p or -o Port) and to every -J jump host; what follows
// the destination is a command run on the other side.
func sshOperands(w *bashWalker, name string, args []shWord, in dirSet) {
	var opts []arg
	var dest *shWord
	for _, a := range sshSpec.parse(args) {
		if a.opt != "" {
			opts = append(opts, a)
			continue
		}
		d := a.value
		dest = &d
		// OpenSSH reads options after the destination too, up to the command.
		for _, b := range sshSpec.parse(args[a.index+1:]) {
			if b.opt == "" {
				break
			}
			opts = append(opts, b)
		}
		break
	}
	for _, f := range values(opts, "-E") {
		w.pathRequirements(tool.KindFilesystemWrite, f, in, name)
	}
	if dest == nil || has(opts, "-G", "-V", "-Q") {
		return // prints configuration: connects nowhere
	}
	port, jumps, unknown := "22", values(opts, "-J"), false
	var hostName *shWord
	for _, o := range values(opts, "-o") {
		text, lit := o.literal()
		if key, _, ok := sshOption(o); !lit && ok && sshCommandKeys.get()[strings.ToLower(key)] != "" {
			continue // a command, not where ssh connects (see sshOptionPrograms)
		}
		unknown = unknown || !lit // it may set the port or the host name
		key, val, _ := strings.Cut(strings.Replace(text, "=", " ", 1), " ")
		val = strings.TrimSpace(val)
		switch strings.ToLower(key) {
		case "port":
			port = val
		case "hostname":
			v := literalWord(val)
			hostName = &v
		case "proxyjump":
			jumps = append(jumps, literalWord(val))
		}
	}
	for _, p := range values(opts, "-p") {
		port, _ = p.literal()
	}
	if unknown {
		port = ""
	}
	w.sshConnect(*dest, hostName, port, name)
	w.sshOptionPrograms(values(opts, "-o"), sshDestTokens(*dest, hostName, port), in)
	for _, j := range jumps {
		text, lit := j.literal()
		if !lit {
			w.connectUnresolved(j, name)
			continue
		}
		for _, hop := range strings.Split(text, ",") {
			if hop == "none" {
				continue
			}
			if strings.Contains(hop, "://") {
				w.connectURL(literalWord(hop), "", name, in)
			} else {
				w.connectHostPort(literalWord(hop), "22", name)
			}
		}
	}
}

// sshConnect adds the connection to an ssh destination: ssh://[user@]host[:port]
// or [user@]host, whose port is port ("" when not known).
func (w *bashWalker) sshConnect(dest shWord, hostName *shWord, port, via string) {
	if strings.HasPrefix(dest.knownPrefix(), "ssh://") {
		if _, authority, _, ok := urlAuthority(dest, ""); ok {
			if h, p, ok := splitAuthority(authority, port); ok {
				if hostName != nil {
					h = hostName.text()
				}
				w.connect(h, p, via)
				return
			}
		}
		w.connectUnresolved(dest, via)
		return
	}
	if hostName != nil {
		dest = *hostName
	}
	text, lit := dest.literal()
	if i := strings.LastIndexByte(text, '@'); i >= 0 {
		text = text[i+1:]
	}
	if lit && port != "" && text != "" && !strings.ContainsAny(text, "/{}*?") && strings.Trim(port, "0123456789") == "" {
		w.connect(text, port, via)
		return
	}
	w.connectUnresolved(dest, via)
}

var scpSpec = optSpec{short: "cFiJlSoPDX", exact: true}

var rsyncSpec = optSpec{short: "efBTM", exact: true, long: []string{"rsh", "filter", "exclude",
	"include", "exclude-from", "include-from", "files-from", "block-size", "temp-dir", "remote-option",
	"rsync-path", "backup-dir", "suffix", "compare-dest", "copy-dest", "link-dest", "partial-dir",
	"log-file", "log-file-format", "out-format", "password-file", "port", "sockopts", "timeout",
	"contimeout", "bwlimit", "max-size", "min-size", "max-delete", "max-alloc", "modify-window",
	"chmod", "chown", "usermap", "groupmap", "write-batch", "only-write-batch", "read-batch",
	"protocol", "iconv", "checksum-choice", "compress-choice", "compress-level", "skip-compress",
	"address", "info", "debug", "stop-after", "stop-at", "outbuf", "copy-as", "early-input"}}

// scpOperands: scp and rsync connect to the host of every remote operand
// ([user@]host:path, scp:// or rsync:// URLs, rsync's host::module) and
// read local sources and write a local destination (the last operand).
func scpOperands(w *bashWalker, name string, args []shWord, in dirSet) {
	spec, sshPort, daemonPort := scpSpec, "22", "873"
	if name == "rsync" {
		spec = rsyncSpec
	}
	parsed := spec.parse(args)
	for _, p := range values(parsed, "-P", "--port") {
		if name == "scp" {
			sshPort, _ = p.literal()
		} else {
			daemonPort, _ = p.literal()
		}
	}
	for _, e := range values(parsed, "-e", "--rsh") {
		sshPort = rshPort(e)
		// rsync splits the remote shell's command line into words itself.
		w.runLater(program{word: e, shell: true, via: name + " -e"}, in)
	}
	if name == "rsync" {
		// --rsync-path is a command line the remote shell runs; the
		// batch and log files are written or read here, as a
		// redirection would.
		for _, p := range values(parsed, "--rsync-path") {
			w.runLater(program{word: p, shell: true, via: name + " --rsync-path"}, in)
		}
		for _, f := range values(parsed, "--log-file", "--write-batch", "--only-write-batch") {
			w.pathRequirements(tool.KindFilesystemWrite, f, in, name)
		}
		for _, f := range values(parsed, "--read-batch", "--files-from", "--exclude-from", "--include-from",
			"--password-file", "--early-input") {
			w.pathRequirements(tool.KindFilesystemRead, f, in, name)
		}
	}
	if name == "scp" {
		for _, s := range values(parsed, "-S") {
			w.runLater(program{word: s, via: name + " -S"}, in)
		}
		w.sshOptionPrograms(values(parsed, "-o"), nil, in)
	}
	ops := operands(parsed)
	for i, op := range ops {
		kind := tool.KindFilesystemRead
		if i == len(ops)-1 && len(ops) > 1 {
			kind = tool.KindFilesystemWrite
		}
		lp := op.knownPrefix()
		switch host, remote, decided := scpHost(lp); {
		case strings.HasPrefix(lp, "scp://") || strings.HasPrefix(lp, "rsync://"):
			port := sshPort
			if strings.HasPrefix(lp, "rsync://") {
				port = daemonPort
			}
			if _, authority, _, ok := urlAuthority(op, ""); ok {
				if h, p, ok := splitAuthority(authority, port); ok {
					w.connect(h, p, name)
					continue
				}
			}
			w.connectUnresolved(op, name)
		case remote && name == "rsync" && rsyncDaemon(lp):
			w.connectHostPort(literalWord(net2(host, daemonPort)), "", name)
		case remote && sshPort != "":
			w.connectHostPort(literalWord(net2(host, sshPort)), "", name)
		case remote:
			w.connectUnresolved(op, name) // the remote shell's port is not known
		case !decided && !op.known():
			// A local path or a remote one: either could be true.
			w.connectUnresolved(op, name)
			w.pathRequirements(kind, op, in, name)
		default:
			w.pathRequirements(kind, op, in, name)
			if kind == tool.KindFilesystemRead && has(parsed, "--remove-source-files") {
				w.pathRequirements(tool.KindFilesystemWrite, op, in, name)
			}
		}
	}
	for _, j := range values(parsed, "-J") {
		w.connectHostPort(j, "22", name)
	}
	for _, f := range values(parsed, "--log-file", "--write-batch", "--only-write-batch") {
		w.pathRequirements(tool.KindFilesystemWrite, f, in, name)
	}
}

// rsyncDaemon reports whether an rsync operand is "[user@]host::module",
// a path on an rsync daemon.
func rsyncDaemon(lp string) bool {
	if b, e := strings.IndexByte(lp, '['), strings.IndexByte(lp, ']'); b >= 0 && e > b {
		return strings.HasPrefix(lp[e+1:], "::")
	}
	i, slash := strings.Index(lp, "::"), strings.IndexByte(lp, '/')
	return i > 0 && (slash < 0 || i < slash)
}

// rshPort is the port of rsync's -e "ssh -p N" ("" when the remote shell
// is not known).
func rshPort(e shWord) string {
	text, lit := e.literal()
	if !lit {
		return ""
	}
	f := strings.Fields(text)
	if len(f) == 0 || !strings.HasSuffix(f[0], "ssh") {
		return ""
	}
	for i := 1; i < len(f); i++ {
		switch {
		case f[i] == "-p" && i+1 < len(f):
			return f[i+1]
		case strings.HasPrefix(f[i], "-p"):
			return f[i][2:]
		case strings.HasPrefix(strings.ToLower(f[i]), "-oport="):
			return f[i][len("-oport="):]
		}
	}
	return "22"
}
