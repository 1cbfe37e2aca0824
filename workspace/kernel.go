package workspace

import (
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/airlockhq/airlock/egress"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/tool"
)

// Enforcement is how the sandbox enforces one deny rule of a workspace
// (KernelRules): by a kernel or egress mechanism, or only by the gate.
type Enforcement = profile.RuleEnforcement

// KernelRules compiles the deny rules of set into the profile fields
// that make the sandbox enforce them whatever program the command runs.
// overlay holds only those fields (and Enforced, the report): merge it
// onto the workspace's profile with profile.Merge before profile.New.
// report lists every deny rule that applies now, with how it is
// enforced. Expired rules are skipped; ask and allow rules are the
// gate's alone and are not listed.
//
// workspaceDir is the workspace the rules were loaded for: relative rule
// paths are already absolute against it (rules.Base), and it decides
// which write denials become protected paths.
func KernelRules(set *rules.Set, workspaceDir string) (overlay profile.Spec, report []Enforcement) {
	c := compiler{ws: wsNames(workspaceDir), now: time.Now()}
	for _, r := range set.Rules() {
		if r.Effect != rules.Deny || r.Pattern == nil || r.Expired(c.now) {
			continue
		}
		e := Enforcement{Rule: string(r.Effect) + " " + r.Match, Source: r.Where()}
		c.rule(r, &e)
		report = append(report, e)
	}
	c.out.Enforced = report
	return c.out, report
}

// compiler accumulates the overlay of one KernelRules call.
type compiler struct {
	// ws are the workspace's names: as given and with symlinks resolved.
	ws  []string
	now time.Time
	out profile.Spec
	// programs are found on first use (command.go).
	programs *programIndex
}

func wsNames(dir string) []string {
	if dir == "" {
		return nil
	}
	dir = filepath.Clean(dir)
	names := []string{dir}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		names = append(names, real)
	}
	return names
}

// gateOnly marks e as enforced by the gate alone, saying why.
func gateOnly(e *Enforcement, why string) {
	e.Kernel, e.Mechanism, e.Note = false, "", "gate only: "+why
}

func (c *compiler) rule(r *rules.Rule, e *Enforcement) {
	p := r.Pattern
	switch p.Kind {
	case tool.KindFilesystemRead:
		c.read(p, e)
	case tool.KindFilesystemWrite:
		c.write(p, e)
	case tool.KindNetworkConnect:
		c.network(p, e)
	case tool.KindCommandExecute:
		c.command(p, e)
	default:
		gateOnly(e, "tool calls are decided by the gate; the sandbox runs commands, not tools")
	}
}

// read: every matching path is masked (filesystem.deny), which also
// covers files that appear later at a matching path.
func (c *compiler) read(p *rules.Pattern, e *Enforcement) {
	switch {
	case p.OnlyTool != "":
		gateOnly(e, "the rule is about Claude Code's "+p.OnlyTool+" tool only, not about reading the files")
		return
	case p.All():
		gateOnly(e, "a deny of every read would leave nothing for a command to start from")
		return
	}
	globs, ok := p.ElementGlobs()
	if !ok {
		gateOnly(e, "the pattern has too many \"**\" inside path names to write as deny globs")
		return
	}
	var kept, hides []string
	for _, g := range globs {
		if c.hidesWorkspace(g) {
			hides = append(hides, g)
			continue
		}
		kept = append(kept, g)
	}
	if len(kept) == 0 {
		gateOnly(e, "the paths include the workspace itself ("+strings.Join(hides, ", ")+"), which the sandbox cannot hide from a command working in it")
		return
	}
	c.out.Filesystem.Deny = append(c.out.Filesystem.Deny, kept...)
	e.Kernel = true
	e.Mechanism = "filesystem.deny " + strings.Join(kept, ", ") + ": masked in the mount view; files that appear later are refused by the deny watch (the Report's deny-new-files line)"
	if len(hides) > 0 {
		e.Note = "not masked: " + strings.Join(hides, ", ") + " would hide the workspace itself (the gate still refuses it)"
	}
}

// hidesWorkspace reports whether the deny glob g matches the workspace
// or one of its parents (profile.New refuses such an entry).
func (c *compiler) hidesWorkspace(g string) bool {
	for _, ws := range c.ws {
		for q := ws; ; q = filepath.Dir(q) {
			if profile.MatchGlob(g, q) {
				return true
			}
			if q == "/" {
				break
			}
		}
	}
	return false
}

// write: paths inside the workspace become protected (read-only, and not
// creatable); a bare Edit deny makes the workspace read-only.
func (c *compiler) write(p *rules.Pattern, e *Enforcement) {
	if p.All() || c.coversWorkspace(p) {
		c.out.ReadOnlyWorkspace = true
		e.Kernel = true
		e.Mechanism = "read-only workspace"
		e.Note = "the profile's write paths and the private HOME and /tmp stay writable"
		return
	}
	globs, ok := p.ElementGlobs()
	if !ok {
		gateOnly(e, "the pattern has too many \"**\" inside path names to write as protected paths")
		return
	}
	var rels, wild, outside []string
	for _, g := range globs {
		rel, in := c.relative(g)
		// A protected directory is read-only with all it holds.
		rel = strings.TrimSuffix(rel, "/**")
		switch {
		case !in:
			outside = append(outside, g)
		case strings.ContainsAny(rel, "*?["):
			wild = append(wild, rel)
		default:
			rels = append(rels, rel)
		}
	}
	c.out.Filesystem.Protected = append(c.out.Filesystem.Protected, rels...)
	c.out.Filesystem.Protected = append(c.out.Filesystem.Protected, wild...)
	var mech, notes []string
	if len(rels) > 0 {
		mech = append(mech, "filesystem.protected "+strings.Join(rels, ", ")+": read-only mounts; absent names held by read-only placeholders (top level) and refused by the create guard (the Report's protected-paths line)")
	}
	if len(wild) > 0 {
		mech = append(mech, "filesystem.protected "+strings.Join(wild, ", ")+": what matches at the start is read-only")
		mech = append(mech, "new names matching them refused by the create guard")
		notes = append(notes, "without the create guard (the Report's protected-paths line), or for a directory moved into place with a matching name inside, a new match stays until the end-of-run check moves it aside")
	}
	if len(outside) > 0 {
		mech = append(mech, "outside the workspace ("+strings.Join(outside, ", ")+"): read-only in the sandbox unless a write path of the profile covers it")
	}
	e.Kernel = true
	e.Mechanism = strings.Join(mech, "; ")
	e.Note = strings.Join(notes, "; ")
}

// coversWorkspace reports whether a path pattern is about the whole
// workspace (Edit(./**), Edit(/), Edit(//abs/ws/**)).
func (c *compiler) coversWorkspace(p *rules.Pattern) bool {
	globs, ok := p.ElementGlobs()
	if !ok {
		return false
	}
	for _, g := range globs {
		for _, ws := range c.ws {
			if g == ws || g == ws+"/**" {
				return true
			}
		}
	}
	return false
}

// relative returns g relative to the workspace, when it lies inside it.
func (c *compiler) relative(g string) (string, bool) {
	for _, ws := range c.ws {
		if rel, ok := strings.CutPrefix(g, ws+"/"); ok && rel != "" {
			return rel, true
		}
	}
	return "", false
}

// network: host rules become the egress layer's deny list; a bare Net
// deny is no network at all.
func (c *compiler) network(p *rules.Pattern, e *Enforcement) {
	switch {
	case p.OnlyTool != "":
		gateOnly(e, "the rule is about Claude Code's "+p.OnlyTool+" tool only")
		return
	case p.All():
		c.out.Network.Mode = profile.NetworkModeNone
		e.Kernel = true
		e.Mechanism = "network none: a network namespace with loopback only"
		return
	}
	host, port, ok := p.Host()
	if !ok {
		gateOnly(e, "the pattern names no host")
		return
	}
	entry := host
	if port != "" {
		entry = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		entry = "[" + host + "]"
	}
	r, err := egress.ParseDeny(entry)
	if err != nil {
		gateOnly(e, "the egress layer cannot hold it: "+err.Error())
		return
	}
	c.out.Network.Deny = append(c.out.Network.Deny, entry)
	e.Kernel = true
	e.Mechanism = "network.deny " + entry + ": refused by the egress gateway before the allowlist, with network allow or all (network none reaches nothing)"
	if r.Name != "" {
		e.Note = "a name is refused for the addresses the gateway's DNS answered it with"
		if port == "" {
			e.Note += " (and is not answered)"
		}
		if r.Wildcard {
			e.Note += "; with network all, a connection to the address of a name below it that the command learnt elsewhere is not tied to the name"
		} else {
			e.Note += "; with network all, also for the addresses it has when the run starts (looked up then), under any name or as a literal"
		}
	}
}
