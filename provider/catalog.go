package provider

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/airlockhq/airlock/profile"
)

// Driver is a provider kind the catalog can configure: its name in
// `provider = "…"`, what it enforces, and how to open one sandbox.
// Open is called on first use, never by loading.
type Driver struct {
	Name         string
	Capabilities Capabilities
	Open         func(Config) (Provider, error)
}

// CatalogFile is where a workspace keeps its catalog.
const CatalogFile = ".airlock/sandboxes.toml"

// FindCatalog returns the catalog file to read: explicit when set, else
// the workspace's .airlock/sandboxes.toml, else
// ~/.config/airlock/sandboxes.toml.
func FindCatalog(explicit, workspace string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	var tried []string
	if workspace != "" {
		p := filepath.Join(workspace, CatalogFile)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		tried = append(tried, p)
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".config", "airlock", "sandboxes.toml")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		tried = append(tried, p)
	}
	return "", &Error{Class: ErrConfig, Op: "find catalog",
		Msg: "no sandboxes.toml at " + strings.Join(tried, " or ") + "; write one there or pass --config FILE"}
}

// LoadCatalog reads a catalog file (see ParseCatalog).
func LoadCatalog(path string, drivers ...Driver) (*Catalog, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{Class: ErrConfig, Op: "load", Msg: err.Error()}
	}
	return ParseCatalog(path, data, drivers...)
}

// Compiled on first use, not at init: every airlock process links this
// package, and only a catalog's loading needs them.
var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,46}$`) })

// ParseCatalog reads a catalog's text; file names it in messages and
// anchors relative profile paths. Every error is an *Error of class
// ErrConfig naming the file, the line and the fix. Nothing is started.
func ParseCatalog(file string, data []byte, drivers ...Driver) (*Catalog, error) {
	var raw map[string]any
	if _, err := toml.Decode(string(data), &raw); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, configErr(file, pe.Position.Line, "%s; fix the TOML syntax (a name defined twice is an error)", pe.Message)
		}
		return nil, configErr(file, 0, "%v", err)
	}
	p := &parser{file: file, lines: strings.Split(string(data), "\n"), drivers: map[string]Driver{}}
	for _, d := range drivers {
		p.drivers[d.Name] = d
	}
	c := &Catalog{sandboxes: map[string]*entry{}, agents: map[string][]string{}}
	for _, top := range sortedKeys(raw) {
		tbl, ok := raw[top].(map[string]any)
		if top != "sandbox" && top != "agent" || !ok {
			return nil, configErr(file, p.line(top, ""), "unknown key %q; a catalog has only [sandbox.NAME] and [agent.NAME] tables", top)
		}
		for _, name := range sortedKeys(tbl) {
			if strings.HasPrefix(name, "_") {
				continue // an example the operator left in, switched off
			}
			section := top + "." + name
			if !nameRE().MatchString(name) {
				return nil, configErr(file, p.line(section, ""), "%q is not a valid name; use letters, digits, _ and -, start with a letter, at most 47 characters (a leading _ disables the table)", name)
			}
			body, ok := tbl[name].(map[string]any)
			if !ok {
				return nil, configErr(file, p.line(section, ""), "%s must be a table: write [%s]", section, section)
			}
			var err error
			if top == "sandbox" {
				var e *entry
				if e, err = p.sandbox(name, body); err == nil {
					c.sandboxes[name] = e
				}
			} else {
				err = p.agent(c, name, body)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	for agent, names := range c.agents {
		for _, n := range names {
			if _, ok := c.sandboxes[n]; !ok {
				return nil, configErr(file, p.line("agent."+agent, "sandboxes"), "agent %q is assigned %q, which no [sandbox.%s] defines; define it or remove the name", agent, n, n)
			}
		}
	}
	return c, nil
}

func configErr(file string, line int, format string, args ...any) error {
	where := file
	if line > 0 {
		where = fmt.Sprintf("%s:%d", file, line)
	}
	return &Error{Class: ErrConfig, Op: where, Msg: fmt.Sprintf(format, args...)}
}

type parser struct {
	file    string
	lines   []string
	drivers map[string]Driver
}

// line finds the line of key inside [section] (or of the header when key
// is empty). The TOML decoder keeps positions private, and a message
// without a line makes the operator search.
func (p *parser) line(section, key string) int {
	in := false
	for i, l := range p.lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "[") {
			h := strings.Trim(t, "[] \t")
			if j := strings.Index(h, "]"); j >= 0 {
				h = h[:j]
			}
			h = strings.ReplaceAll(strings.ReplaceAll(h, `"`, ""), " ", "")
			in = h == section || strings.HasPrefix(h, section+".") && key == ""
			if in && key == "" {
				return i + 1
			}
			continue
		}
		if in && key != "" {
			k, _, ok := strings.Cut(t, "=")
			if ok && strings.Trim(strings.TrimSpace(k), `"`) == key {
				return i + 1
			}
		}
	}
	return 0
}

var sandboxKeys = []string{"provider", "image", "profile", "timeout", "memory", "cpu", "pids", "max_output", "scratch", "network", "scope", "max_scopes"}

func (p *parser) sandbox(name string, body map[string]any) (*entry, error) {
	section := "sandbox." + name
	cfg := Config{Name: name, File: p.file, Line: p.line(section, ""),
		Timeout: DefaultTimeout, Memory: DefaultMemory, CPU: DefaultCPU, Pids: DefaultPids,
		MaxOutput: DefaultMaxOutput, Scratch: DefaultScratch, Network: Network{Mode: NetworkNone},
		Scope: ScopeExecution, MaxScopes: DefaultMaxScopes}
	set := map[string]bool{}
	bad := func(key, format string, args ...any) error {
		return configErr(p.file, p.line(section, key), "%s.%s: %s", section, key, fmt.Sprintf(format, args...))
	}
	for _, key := range sortedKeys(body) {
		v := body[key]
		set[key] = true
		str, isStr := v.(string)
		switch key {
		case "provider", "image", "profile", "timeout", "memory", "max_output", "scratch", "network", "scope":
			if !isStr {
				return nil, bad(key, "must be a string in quotes")
			}
		}
		switch key {
		case "provider":
			cfg.Provider = str
		case "image":
			if !imageRE().MatchString(str) {
				return nil, bad(key, "%q is not pinned; use a local image id (sha256:…) or a digest reference (name@sha256:…): tags can change under you", str)
			}
			cfg.Image = str
		case "profile":
			pr, err := p.profile(str)
			if err != nil {
				return nil, bad(key, "%v", err)
			}
			cfg.Profile = pr
		case "timeout":
			d, err := time.ParseDuration(str)
			if err != nil || d <= 0 {
				return nil, bad(key, "%q is not a duration; write one like \"30s\" or \"5m\"", str)
			}
			cfg.Timeout = d
		case "memory", "max_output", "scratch":
			n, err := profile.ParseSize(str)
			if err != nil || n <= 0 {
				return nil, bad(key, "%q is not a size; write one like \"512MiB\"", str)
			}
			switch key {
			case "memory":
				cfg.Memory = int64(n)
			case "max_output":
				cfg.MaxOutput = int64(n)
			default:
				cfg.Scratch = int64(n)
			}
		case "cpu":
			f, ok := number(v)
			if !ok || f <= 0 || f > 1024 {
				return nil, bad(key, "must be a positive number of cores, like 1.0 or 0.5")
			}
			cfg.CPU = f
		case "pids", "max_scopes":
			f, ok := number(v)
			if !ok || f != float64(int(f)) || f < 1 || f > 1<<20 {
				return nil, bad(key, "must be a positive whole number")
			}
			if key == "pids" {
				cfg.Pids = int(f)
			} else {
				cfg.MaxScopes = int(f)
			}
		case "network":
			n, fix := parseNetwork(str)
			if fix != "" {
				return nil, bad(key, "%q: %s", str, fix)
			}
			cfg.Network = n
		case "scope":
			if str != ScopeExecution && str != ScopeInvocation && str != ScopeSession {
				return nil, bad(key, "%q: use \"execution\", \"invocation\" or \"session\"", str)
			}
			cfg.Scope = str
		default:
			return nil, bad(key, "unknown key; a sandbox has %s", strings.Join(sandboxKeys, ", "))
		}
	}
	d, ok := p.drivers[cfg.Provider]
	if !ok {
		var names []string
		for n := range p.drivers {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, bad("provider", "%q is not a provider here; use one of %s", cfg.Provider, strings.Join(names, ", "))
	}
	if d.Capabilities.Profiles && cfg.Profile == "" {
		cfg.Profile = profile.DefaultPreset
	}
	if miss := d.Capabilities.missing(cfg, set); len(miss) > 0 {
		return nil, configErr(p.file, cfg.Line, "[%s]: provider %q does not enforce %s; change the sandbox or use a provider that does",
			section, cfg.Provider, strings.Join(miss, ", "))
	}
	return &entry{cfg: cfg, driver: d, slots: make(chan struct{}, cfg.MaxScopes)}, nil
}

// imageRE accepts only content-addressed images.
var imageRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(sha256:[0-9a-f]{64}|[a-z0-9][a-z0-9._/:-]*@sha256:[0-9a-f]{64})$`)
})

// profile checks a profile value: a preset name, or a profile file
// relative to the catalog's directory.
func (p *parser) profile(v string) (string, error) {
	if _, err := profile.LookupPreset(v); err == nil {
		return v, nil
	}
	if !strings.ContainsAny(v, "/.") {
		return "", fmt.Errorf("%q is neither a preset (%s) nor a profile file", v, strings.Join(profile.PresetNames(), ", "))
	}
	path := v
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(p.file), path)
	}
	if _, err := profile.LoadFile(path); err != nil {
		return "", err
	}
	return path, nil
}

func (p *parser) agent(c *Catalog, name string, body map[string]any) error {
	section := "agent." + name
	for _, key := range sortedKeys(body) {
		if key != "sandboxes" {
			return configErr(p.file, p.line(section, key), "%s.%s: unknown key; an agent has only sandboxes = [\"name\", …]", section, key)
		}
		list, ok := body[key].([]any)
		var names []string
		for _, v := range list {
			s, isStr := v.(string)
			ok = ok && isStr
			names = append(names, s)
		}
		if !ok {
			return configErr(p.file, p.line(section, key), "%s.sandboxes must be a list of names in quotes, like [\"py\"]", section)
		}
		c.agents[name] = names
	}
	return nil
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
