package rules

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"

	"github.com/airlockhq/airlock/tool"
)

// ErrSyntax is wrapped by every error about the text of a rule.
var ErrSyntax = errors.New("rules: bad rule")

// Base is what relative parts of a path rule are taken against.
type Base struct {
	// Root is what "/path" is relative to: the directory of the rule's
	// source (the workspace for workspace, local and .claude sources).
	Root string
	// Cwd is what "path" and "./path" are relative to: the workspace.
	Cwd string
	// Home is what "~/path" is relative to.
	Home string
}

// Pattern is a parsed rule match: which requirements a rule is about.
type Pattern struct {
	// Tool is the name before the parentheses ("Bash", "Read", "Net",
	// "mcp__github"); Spec is the text inside them, "" for the whole tool.
	Tool, Spec string
	// Kind is the requirement kind the pattern matches.
	Kind string
	// OnlyTool restricts the pattern to requirements of that tool ("Glob",
	// "Grep", a bare "WebFetch"); empty means any tool.
	OnlyTool string

	all   bool          // matches every requirement of Kind (and OnlyTool)
	cmd   *glob         // Bash: the command glob
	short *glob         // Bash: cmd without a trailing " *", which may match nothing
	canon *canonPattern // Bash: the canonical form (canon.go); nil when the program is a wildcard
	path  *glob         // Read/Edit: the absolute path glob
	abs   string        // Read/Edit: the path glob's text, for PathGlobs
	dir   string        // Read/Edit: the literal directory the glob starts in
	// alt and altDir are path and dir with symlinks in dir resolved, when
	// that changes it: a rule about "secrets/**" where secrets -> vault
	// is about vault's files too, and a rule written through a symlinked
	// workspace about the real one.
	alt    *glob
	altDir string
	altAbs string
	// selves are path and alt without a trailing "/**": the directory
	// itself, which "dir/**" is about too (rm -rf dir removes what the
	// rule protects; ls dir lists it).
	selves []*glob
	host   string // Net/WebFetch: host, or ".suffix" for "*.suffix"
	port   string // Net: port, "" for any
	name   string // tool.invoke: exact name, or prefix when prefix is set
	prefix bool
	arg    *argPattern // tool.invoke of an MCP tool: one argument's pattern (mcpargs.go)
}

// fileTools are the tool names whose specifier is a path, with the kind
// they match and whether the rule is limited to that tool.
var fileTools = map[string]struct {
	kind string
	only bool
}{
	"Read":         {tool.KindFilesystemRead, false},
	"Edit":         {tool.KindFilesystemWrite, false},
	"Write":        {tool.KindFilesystemWrite, false},
	"MultiEdit":    {tool.KindFilesystemWrite, false},
	"NotebookEdit": {tool.KindFilesystemWrite, false},
	"Glob":         {tool.KindFilesystemRead, true},
	"Grep":         {tool.KindFilesystemRead, true},
	"LS":           {tool.KindFilesystemRead, true},
	"NotebookRead": {tool.KindFilesystemRead, true},
}

// ParsePattern parses a rule's match text. Path specifiers are made
// absolute against base: "//p" is absolute, "~/p" is in base.Home, "/p" is
// relative to base.Root, "p" and "./p" to base.Cwd; a pattern with no "/"
// but a trailing one matches at any depth, as in .gitignore.
func ParsePattern(text string, base Base) (*Pattern, error) {
	text = strings.TrimSpace(text)
	name, spec, hasSpec := strings.Cut(text, "(")
	if hasSpec {
		if !strings.HasSuffix(spec, ")") {
			return nil, fmt.Errorf("%w %q: missing the closing parenthesis", ErrSyntax, text)
		}
		spec = strings.TrimSpace(spec[:len(spec)-1])
		if spec == "" {
			return nil, fmt.Errorf("%w %q: empty parentheses; write %s alone to match every use", ErrSyntax, text, name)
		}
	}
	if !validToolName(name) {
		return nil, fmt.Errorf("%w %q: %q is not a tool name (letters, digits, _ and -)", ErrSyntax, text, name)
	}
	p := &Pattern{Tool: name, Spec: spec}
	if spec == "*" || spec == "**" {
		spec = "" // Bash(*) is Bash
	}
	switch {
	case name == "Bash":
		p.Kind = tool.KindCommandExecute
		if spec == "" {
			p.all = true
			break
		}
		if s, ok := strings.CutSuffix(spec, ":*"); ok {
			// Legacy prefix form: "git log:*" is "git log" alone or
			// followed by a space and anything.
			spec = strings.TrimSpace(s) + " *"
		}
		p.cmd = compileCommand(spec)
		p.canon = compileCanonical(spec)
		if n := len(p.cmd.toks); n >= 2 && p.cmd.toks[n-1].kind == tokStar && p.cmd.toks[n-2] == (token{kind: tokLit, r: ' '}) {
			p.short = (&glob{toks: p.cmd.toks[:n-2]}).finish()
		}
	case fileTools[name].kind != "":
		ft := fileTools[name]
		p.Kind = ft.kind
		if ft.only {
			p.OnlyTool = name
		}
		if spec == "" {
			p.all = true
			break
		}
		abs, err := absPattern(spec, base)
		if err != nil {
			return nil, fmt.Errorf("%w %q: %v", ErrSyntax, text, err)
		}
		p.path = compilePath(abs)
		p.abs = abs
		p.dir = literalDir(p.path)
		if real := tool.Canonical(p.dir); real != p.dir && strings.HasPrefix(abs, p.dir) {
			p.altAbs = escapePath(real) + abs[len(p.dir):]
			p.alt = compilePath(p.altAbs)
			p.altDir = literalDir(p.alt)
		}
		if dir, ok := strings.CutSuffix(abs, "/**"); ok && dir != "" {
			p.selves = append(p.selves, compilePath(dir))
			if p.alt != nil {
				p.selves = append(p.selves, compilePath(escapePath(tool.Canonical(p.dir))+dir[len(p.dir):]))
			}
		}
	case name == "WebFetch":
		p.Kind = tool.KindNetworkConnect
		if spec == "" {
			p.all, p.OnlyTool = true, "WebFetch"
			break
		}
		domain, ok := strings.CutPrefix(spec, "domain:")
		if !ok || domain == "" {
			return nil, fmt.Errorf("%w %q: WebFetch takes domain:HOST, e.g. WebFetch(domain:example.com)", ErrSyntax, text)
		}
		if err := p.setHost(domain, false); err != nil {
			return nil, fmt.Errorf("%w %q: %v", ErrSyntax, text, err)
		}
	case name == "Net":
		p.Kind = tool.KindNetworkConnect
		if spec == "" {
			p.all = true
			break
		}
		if err := p.setHost(spec, true); err != nil {
			return nil, fmt.Errorf("%w %q: %v", ErrSyntax, text, err)
		}
	default:
		p.Kind = tool.KindToolInvoke
		if hasSpec && spec != "" {
			if !strings.HasPrefix(name, "mcp__") {
				return nil, fmt.Errorf("%w %q: %s takes no specifier; write %s", ErrSyntax, text, name, name)
			}
			a, err := parseArgPattern(name, spec)
			if err != nil {
				return nil, fmt.Errorf("%w %q: %v", ErrSyntax, text, err)
			}
			p.arg = a
		}
		p.name = name
		if n, ok := strings.CutSuffix(name, "__*"); ok {
			p.name, p.prefix = n+"__", true
		} else if strings.HasPrefix(name, "mcp__") && !strings.Contains(name[len("mcp__"):], "__") {
			p.name, p.prefix = name+"__", true // a whole MCP server
		}
	}
	return p, nil
}

func validToolName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		ok := c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '*' && i == len(s)-1
		if !ok {
			return false
		}
	}
	return true
}

// absPattern makes a path specifier absolute (see ParsePattern).
func absPattern(spec string, base Base) (string, error) {
	dirOnly := strings.HasSuffix(spec, "/") && len(spec) > 1
	var abs string
	switch {
	case strings.HasPrefix(spec, "//"):
		abs = "/" + strings.TrimLeft(spec, "/")
	case spec == "~" || strings.HasPrefix(spec, "~/"):
		if base.Home == "" {
			return "", errors.New("~ needs a home directory")
		}
		abs = base.Home + strings.TrimPrefix(spec, "~")
	case strings.HasPrefix(spec, "/"):
		if base.Root == "" {
			return "", errors.New("/path is relative to the rule file's directory, which is unknown here; write //path for an absolute path")
		}
		abs = joinPattern(base.Root, spec)
	default:
		if base.Cwd == "" {
			return "", errors.New("a relative path needs a workspace")
		}
		rel := strings.TrimPrefix(spec, "./")
		if !strings.HasPrefix(spec, "./") && !strings.Contains(strings.TrimSuffix(rel, "/"), "/") {
			rel = "**/" + rel // no slash: any depth, as in .gitignore
		}
		abs = joinPattern(base.Cwd, rel)
	}
	abs = cleanPattern(abs)
	if dirOnly {
		abs = strings.TrimSuffix(abs, "/") + "/**"
	}
	return abs, nil
}

// joinPattern joins a directory and a relative pattern without touching
// the pattern's glob characters.
func joinPattern(dir, rel string) string {
	return strings.TrimSuffix(dir, "/") + "/" + strings.TrimPrefix(rel, "/")
}

// cleanPattern cleans "." and ".." elements and doubled slashes of a
// pattern whose glob characters are left alone; filepath.Clean is safe for
// that since no glob character is a separator.
func cleanPattern(p string) string {
	trailing := strings.HasSuffix(p, "/") && p != "/"
	p = filepath.Clean(p)
	if trailing {
		p += "/"
	}
	return p
}

// literalDir is the directory a path glob starts in: its literal text up
// to the last "/" before the first wildcard.
func literalDir(g *glob) string {
	prefix := g.literalPrefix()
	if g.isLiteral() {
		return filepath.Dir(prefix)
	}
	i := strings.LastIndexByte(prefix, '/')
	if i <= 0 {
		return "/"
	}
	return prefix[:i]
}

// setHost parses host[:port] with an optional "*." prefix.
func (p *Pattern) setHost(s string, withPort bool) error {
	host, port := s, ""
	if withPort {
		if h, pt, err := net.SplitHostPort(s); err == nil {
			host, port = h, pt
		}
		if port == "*" {
			port = ""
		}
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if w, ok := strings.CutPrefix(host, "*."); ok {
		host = "." + w
	}
	if host == "" || strings.ContainsAny(host, "*/ ") {
		return fmt.Errorf("%q is not a host: use host, *.domain, host:port or *.domain:port", s)
	}
	// The same normalisation as the targets (tool.NormalizeHost), so a
	// rule for "ｅｖｉｌ.example." is the rule for evil.example.
	suffix := strings.HasPrefix(host, ".")
	norm, err := tool.NormalizeHost(strings.TrimPrefix(host, "."))
	if err != nil {
		return fmt.Errorf("%q is not a host: %v", s, err)
	}
	if suffix {
		norm = "." + norm
	}
	host = norm
	p.host, p.port = host, port
	return nil
}

// subject is a requirement prepared once for matching against many
// patterns.
type subject struct {
	r     *tool.Requirement
	text  string // MatchText, with blanks collapsed for commands
	holes bool
	runes []rune // text as runes, made on first use
	// noParents: match a path's whole text only, not its parents. The
	// Set tries that first for a path with holes, where a parent can be
	// a Hole alone that any rule matches, so that the rule a decision
	// names is the one about the path (Read(~/.ssh/**) for
	// $HOME/.ssh/id_rsa) rather than the first rule of the set.
	noParents bool
	below     []rune // see beneath
}

func newSubject(r *tool.Requirement) *subject {
	text := r.MatchText()
	if r.Kind == tool.KindCommandExecute {
		text = collapseSpace(text)
	}
	return &subject{r: r, text: text, holes: strings.ContainsRune(text, tool.Hole)}
}

func (s *subject) runeSlice() []rune {
	if s.runes == nil {
		s.runes = []rune(s.text)
	}
	return s.runes
}

// matchGlob matches g against the subject's text (or another text with
// the same holes, for path parents).
func (s *subject) matchGlob(g *glob, mode matchMode) bool {
	if !s.holes {
		return g.matchString(s.text)
	}
	return g.match(s.runeSlice(), mode)
}

// match reports whether the pattern matches the subject. Mode strict is
// for allow rules: a Hole matches only a wildcard, and unparsed or
// unresolved requirements never match. Deny and ask rules match
// conservatively: a Hole may stand for anything.
func (p *Pattern) match(s *subject, mode matchMode) bool {
	r := s.r
	if r.Kind != p.Kind || p.OnlyTool != "" && r.Tool != p.OnlyTool {
		return false
	}
	if mode == strict && (r.Unparsed || r.Unresolved) {
		// Not even a bare "Bash" or "Read" allows what could not be
		// parsed or a path nobody knows yet.
		return false
	}
	if p.all {
		return true
	}
	switch p.Kind {
	case tool.KindCommandExecute:
		if s.matchGlob(p.cmd, mode) {
			return true
		}
		// A trailing " *" may match nothing: "ls *" matches "ls".
		return p.short != nil && s.matchGlob(p.short, mode)
	case tool.KindFilesystemRead, tool.KindFilesystemWrite:
		return p.matchPath(s, mode)
	case tool.KindNetworkConnect:
		return p.matchHost(r.Target)
	case tool.KindToolInvoke:
		if p.prefix {
			return strings.HasPrefix(r.Target, p.name)
		}
		return r.Target == p.name && (p.arg == nil || p.arg.match(*r, mode))
	}
	return false
}

// Matches reports whether the pattern matches r as an allow rule would
// (strict) or as a deny or ask rule would (conservative: r's other Names
// too, as Set.Match does).
func (p *Pattern) Matches(r tool.Requirement, conservatively bool) bool {
	mode := strict
	if conservatively {
		mode = conservative
	}
	if p.Kind == tool.KindCommandExecute && !p.all && r.Kind == p.Kind && r.Canon != nil && !r.Unparsed &&
		!(mode == strict && r.Unresolved) {
		if p.matchCanonOne(newCanonSubject(r.Canon), mode) {
			return true
		}
		if mode == strict {
			return false
		}
	}
	if !conservatively {
		return p.match(newSubject(&r), strict)
	}
	if p.match(newSubject(&r), conservative) {
		return true
	}
	for _, n := range r.Names {
		alt := r
		alt.Target, alt.Names, alt.Shape = n, nil, ""
		if p.match(newSubject(&alt), conservative) {
			return true
		}
	}
	return false
}

// matchPath matches the path or any of its parent directories: a rule
// about a directory is about everything in it. For a Tree requirement (a
// directory and everything beneath it) a deny or ask rule also matches
// when it can match anything beneath the directory, and an allow rule
// when it matches everything beneath it, any name at any depth.
func (p *Pattern) matchPath(s *subject, mode matchMode) bool {
	if matchPathGlob(p.path, s, mode) || p.alt != nil && matchPathGlob(p.alt, s, mode) {
		return true
	}
	for _, g := range p.selves {
		if s.matchGlob(g, mode) {
			return true
		}
	}
	return false
}

func matchPathGlob(g *glob, s *subject, mode matchMode) bool {
	if matchPathOrParent(g, s, mode) {
		return true
	}
	if !s.r.Tree {
		return false
	}
	one, two := s.beneath()
	if mode == conservative {
		return g.match(one, conservative)
	}
	return g.match(one, strict) && g.match(two, strict)
}

// beneath returns the subject's text followed by "/" and one Hole (any
// path beneath it, to a deny rule; any name in it, to an allow rule),
// and by "/", a Hole, "/" and a Hole (a name deeper down), made once.
func (s *subject) beneath() (one, two []rune) {
	if s.below == nil {
		base := []rune(strings.TrimSuffix(s.text, "/") + "/")
		s.below = append(append(base, tool.Hole, '/'), tool.Hole)
	}
	return s.below[:len(s.below)-2], s.below
}

// escapePath escapes the glob characters of a literal path.
func escapePath(p string) string {
	if !strings.ContainsAny(p, "*?\\") {
		return p
	}
	var b strings.Builder
	for _, r := range p {
		if r == '*' || r == '?' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func matchPathOrParent(g *glob, s *subject, mode matchMode) bool {
	if !s.holes {
		for path := s.text; ; {
			if g.matchString(path) {
				return true
			}
			i := strings.LastIndexByte(path, '/')
			switch {
			case i < 0 || path == "/":
				return false
			case i == 0:
				path = "/"
			default:
				path = path[:i]
			}
		}
	}
	rs := s.runeSlice()
	if s.noParents {
		return g.match(rs, mode)
	}
	for n := len(rs); n > 0; {
		if g.match(rs[:n], mode) {
			return true
		}
		i := n - 1
		for i >= 0 && rs[i] != '/' {
			i--
		}
		switch {
		case i < 0 || n == 1:
			return false
		case i == 0:
			n = 1
		default:
			n = i
		}
	}
	return false
}

func (p *Pattern) matchHost(target string) bool {
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		host, port = target, ""
	}
	host = strings.ToLower(host)
	if p.port != "" && p.port != port {
		return false
	}
	if strings.HasPrefix(p.host, ".") {
		return strings.HasSuffix(host, p.host) && len(host) > len(p.host)
	}
	return host == p.host
}

// collapseSpace makes every run of blanks one space, as in rule text, so
// that a command's quoted "a  b" can still match the rule saved for it.
func collapseSpace(s string) string {
	if !strings.Contains(s, "  ") && !strings.ContainsAny(s, "\t\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}
