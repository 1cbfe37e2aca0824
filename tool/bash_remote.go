package tool

import (
	"strings"
)

// gitGlobalArgs are git's options before the subcommand that take the
// next word as their argument.
var gitGlobalArgs = map[string]bool{"-c": true, "--git-dir": true, "--work-tree": true,
	"--namespace": true, "--config-env": true, "--super-prefix": true, "--attr-source": true}

var gitCloneSpec = optSpec{short: "obucj", long: []string{"origin", "branch", "upload-pack",
	"template", "reference", "reference-if-able", "separate-git-dir", "depth", "shallow-since",
	"shallow-exclude", "config", "jobs", "filter", "server-option", "bundle-uri", "revision",
	"ref-format"}, flags: []string{"bare", "mirror"}}

var gitRemoteSpec = optSpec{short: "ojsX", long: []string{"depth", "deepen", "shallow-since",
	"shallow-exclude", "upload-pack", "server-option", "refmap", "jobs", "negotiation-tip", "filter",
	"receive-pack", "exec", "repo", "push-option", "strategy", "strategy-option", "sort"},
	flags: []string{"multiple"}}

// gitOperands: git clone connects to (or reads) the repository and writes
// the directory it clones into; fetch, pull, push and ls-remote connect to
// a repository given as a URL. A named remote ("origin") is left to the
// sandbox: its URL is in the repository's configuration.
func gitOperands(w *bashWalker, name string, args []shWord, in dirSet) {
	i, in := gitSubcommand(args, in)
	w.gitPrograms(name, args, i, in)
	if i < 0 {
		return
	}
	sub, _ := args[i].literal()
	switch sub {
	case "clone":
		parsed := gitCloneSpec.parse(args[i+1:])
		ops := operands(parsed)
		if len(ops) == 0 {
			return
		}
		w.gitRepository(ops[0], true, in)
		if len(ops) > 1 {
			w.pathRequirements(KindFilesystemWrite, ops[1], in, name)
		} else {
			w.pathRequirements(KindFilesystemWrite, cloneDir(ops[0], has(parsed, "--bare", "--mirror")), in, name)
		}
		for _, d := range values(parsed, "--separate-git-dir") {
			w.pathRequirements(KindFilesystemWrite, d, in, name)
		}
	case "config":
		w.gitConfigWrite(args[i+1:], in)
	case "fetch", "pull", "push", "ls-remote":
		parsed := gitRemoteSpec.parse(args[i+1:])
		repos := values(parsed, "--repo")
		if ops := operands(parsed); len(repos) == 0 && len(ops) > 0 {
			repos = ops[:1]
			if sub == "fetch" && has(parsed, "--multiple") {
				repos = ops
			}
		}
		for _, r := range repos {
			w.gitRepository(r, false, in)
		}
	}
}

var gitConfigSpec = optSpec{short: "f", long: []string{"file", "blob", "type", "default", "comment", "value", "url"},
	flags: []string{"global", "system", "local", "worktree", "add", "replace-all", "unset", "unset-all",
		"rename-section", "remove-section", "edit", "get", "get-all", "get-regexp", "get-urlmatch",
		"list", "get-color", "get-colorbool", "show-origin", "show-scope"}}

// gitConfigWrite: git config writes a configuration file when it sets,
// unsets, renames, removes or edits (old style: two operands, or one of
// the writing options; new style: set, unset, rename-section,
// remove-section, edit). The file is the repository's .git/config (taken
// beneath the working directory), ~/.gitconfig with --global,
// /etc/gitconfig with --system, .git/config.worktree with --worktree, or
// the --file. A value written there can make every later git run a
// program (core.sshCommand, core.fsmonitor, ...), so it is a write the
// profile decides: .git/config is a protected path.
func (w *bashWalker) gitConfigWrite(args []shWord, in dirSet) {
	parsed := gitConfigSpec.parse(args)
	ops := operands(parsed)
	writes := has(parsed, "--add", "--replace-all", "--unset", "--unset-all", "--rename-section", "--remove-section", "--edit", "-e")
	if len(ops) > 0 {
		switch verb, _ := ops[0].literal(); verb {
		case "set", "unset", "rename-section", "remove-section", "edit":
			writes = true
		case "get", "list":
			writes = false
		default:
			writes = writes || len(ops) >= 2 && !has(parsed, "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "--list", "-l")
		}
	}
	if !writes {
		return
	}
	var file shWord
	switch {
	case len(values(parsed, "--file", "-f")) > 0:
		file = values(parsed, "--file", "-f")[0]
	case has(parsed, "--global"):
		file = literalWord(w.home + "/.gitconfig")
	case has(parsed, "--system"):
		file = literalWord("/etc/gitconfig")
	case has(parsed, "--worktree"):
		file = literalWord(".git/config.worktree")
	default:
		file = literalWord(".git/config")
	}
	w.pathRequirements(KindFilesystemWrite, file, in, "git config")
}

// gitSubcommand returns the index of git's subcommand, after the global
// options (-1 when it is not known), and where -C options take git.
func gitSubcommand(args []shWord, in dirSet) (int, dirSet) {
	for i := 0; i < len(args); i++ {
		a, lit := args[i].literal()
		switch {
		case !lit:
			return -1, in
		case a == "-C" && i+1 < len(args):
			i++
			in = chdir(in, args[i])
		case gitGlobalArgs[a]:
			i++
		case !strings.HasPrefix(a, "-"):
			return i, in
		}
	}
	return -1, in
}

// gitRepository adds what reaching a repository word needs: a connection
// for a URL or "[user@]host:path", a read of a local path being cloned,
// nothing for a remote's name.
func (w *bashWalker) gitRepository(word shWord, clone bool, in dirSet) {
	lp, full := word.knownPrefix(), word.known()
	if i := strings.Index(lp, "://"); i >= 0 {
		if strings.EqualFold(lp[:i], "file") {
			if clone {
				w.pathRequirements(KindFilesystemRead, word.slice(i+3), in, "git")
			}
			return
		}
		w.connectURL(word, "", "git", in)
		return
	}
	helper := strings.TrimLeft(lp, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.")
	if strings.HasPrefix(helper, "::") && len(helper) < len(lp) {
		w.connectUnresolved(word, "git") // transport::address runs a remote helper
		return
	}
	host, remote, decided := scpHost(lp)
	switch {
	case remote:
		w.connectHostPort(literalWord(net2(host, "22")), "", "git")
	case !decided && !full:
		w.connectUnresolved(word, "git")
	case clone:
		w.pathRequirements(KindFilesystemRead, word, in, "git")
	}
}

// cloneDir is the directory git clone makes when none is given: the
// repository's last path element without ".git" (with it, for --bare).
func cloneDir(repo shWord, bare bool) shWord {
	base := repo.base()
	text, lit := base.literal()
	if !lit {
		return shWord{pieces: []piece{{text: base.text(), wild: true}}}
	}
	if t, _ := repo.literal(); strings.HasSuffix(strings.TrimRight(t, "/"), "/.git") {
		text = repo.dir().base().text()
	}
	if i := strings.LastIndexByte(text, ':'); i >= 0 {
		text = text[i+1:]
	}
	text = strings.TrimSuffix(strings.TrimSuffix(text, ".git"), ".bundle")
	if bare {
		text += ".git"
	}
	return literalWord(text)
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
		w.pathRequirements(KindFilesystemWrite, f, in, name)
	}
	if dest == nil || has(opts, "-G", "-V", "-Q") {
		return // prints configuration: connects nowhere
	}
	port, jumps, unknown := "22", values(opts, "-J"), false
	var hostName *shWord
	for _, o := range values(opts, "-o") {
		text, lit := o.literal()
		if key, _, ok := sshOption(o); !lit && ok && sshCommandKeys[strings.ToLower(key)] != "" {
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
	if name == "scp" {
		for _, s := range values(parsed, "-S") {
			w.runLater(program{word: s, via: name + " -S"}, in)
		}
		w.sshOptionPrograms(values(parsed, "-o"), nil, in)
	}
	ops := operands(parsed)
	for i, op := range ops {
		kind := KindFilesystemRead
		if i == len(ops)-1 && len(ops) > 1 {
			kind = KindFilesystemWrite
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
			if kind == KindFilesystemRead && has(parsed, "--remove-source-files") {
				w.pathRequirements(KindFilesystemWrite, op, in, name)
			}
		}
	}
	for _, j := range values(parsed, "-J") {
		w.connectHostPort(j, "22", name)
	}
	for _, f := range values(parsed, "--log-file", "--write-batch", "--only-write-batch") {
		w.pathRequirements(KindFilesystemWrite, f, in, name)
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

var ncSpecs = map[string]optSpec{
	"nc":     {short: "IiMmOPpqsTVwXxe", exact: true},
	"netcat": {short: "IiMmOPpqsTVwXxe", exact: true},
	"ncat": {short: "ceGgmdoxispw", exact: true, long: []string{"exec", "sh-exec", "lua-exec", "proxy",
		"proxy-type", "proxy-auth", "proxy-dns", "source", "source-port", "wait", "idle-timeout",
		"output", "hex-dump", "max-conns", "allow", "allowfile", "deny", "denyfile", "ssl-cert",
		"ssl-key", "ssl-trustfile", "ssl-ciphers", "ssl-servername", "ssl-alpn", "delay"}},
}

// ncOperands: nc HOST PORT... connects to each port (ncat's default is
// 31337), and to a proxy (-x for nc, --proxy for ncat); -U connects to a
// unix socket, which needs write access to it; -l listens.
func ncOperands(w *bashWalker, name string, args []shWord, in dirSet) {
	parsed := ncSpecs[name].parse(args)
	ops := operands(parsed)
	w.ncPrograms(name, args, parsed, in)
	if name == "ncat" {
		for _, f := range values(parsed, "-o", "--output", "-x", "--hex-dump") {
			w.pathRequirements(KindFilesystemWrite, f, in, name)
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
			w.pathRequirements(KindFilesystemWrite, ops[0], in, name)
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
