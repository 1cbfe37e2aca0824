package provider

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is one named sandbox as the catalog validated it, with every
// default filled in.
type Config struct {
	Name     string        `json:"name"`
	Provider string        `json:"provider"`
	Image    string        `json:"image,omitempty"`   // docker: sha256:… or name@sha256:…
	Profile  string        `json:"profile,omitempty"` // local: a preset or a profile file (absolute)
	Timeout  time.Duration `json:"timeout"`           // all-in deadline
	Memory   int64         `json:"memory"`
	CPU      float64       `json:"cpu"`
	Pids     int           `json:"pids"`
	// MaxOutput caps stdout and stderr together.
	MaxOutput int64 `json:"max_output"`
	// Scratch is the size of the writable scratch space (/tmp).
	Scratch   int64   `json:"scratch"`
	Network   Network `json:"network"`
	Scope     string  `json:"scope"`
	MaxScopes int     `json:"max_scopes"`
	// File and Line locate the [sandbox.NAME] table, for messages.
	File string `json:"-"`
	Line int    `json:"-"`
}

// Network is a sandbox's network policy.
type Network struct {
	Mode  string   `json:"mode"`            // none, all or allow
	Allow []string `json:"allow,omitempty"` // host:port entries of mode allow
}

// Network modes.
const (
	NetworkNone  = "none"
	NetworkAll   = "all"
	NetworkAllow = "allow"
)

func (n Network) String() string {
	if n.Mode == NetworkAllow {
		return strings.Join(n.Allow, ",")
	}
	return n.Mode
}

// parseNetwork reads "none", "all" or "host:port,host:port".
func parseNetwork(s string) (Network, string) {
	switch s = strings.TrimSpace(s); s {
	case "", NetworkNone:
		return Network{Mode: NetworkNone}, ""
	case NetworkAll:
		return Network{Mode: NetworkAll}, ""
	}
	var allow []string
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		host, port, err := net.SplitHostPort(e)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			return Network{}, `write "none", "all" or host:port entries separated by commas, like "pypi.org:443,files.pythonhosted.org:443"`
		}
		allow = append(allow, e)
	}
	return Network{Mode: NetworkAllow, Allow: allow}, ""
}

// Capabilities is what a provider enforces. A sandbox whose
// configuration needs something missing here fails at load.
type Capabilities struct {
	// Network lists the modes it enforces: none, all, allow.
	Network []string
	// PrivateRangeBlocking: with network "all" or an allowlist, private
	// and metadata addresses stay unreachable.
	PrivateRangeBlocking bool
	// InputFiles and OutputFiles: Request.Files and Request.OutputFiles.
	InputFiles, OutputFiles bool
	// Budgets it enforces: memory, cpu, pids, output, scratch, timeout.
	Budgets []string
	// Scopes it keeps: execution, invocation, session.
	Scopes []string
	// Image: it runs a container image (and needs one).
	Image bool
	// Profiles: it runs under an airlock profile (preset or file).
	Profiles bool
}

// Budget names of Capabilities.Budgets.
const (
	BudgetMemory  = "memory"
	BudgetCPU     = "cpu"
	BudgetPids    = "pids"
	BudgetOutput  = "output"
	BudgetScratch = "scratch"
	BudgetTimeout = "timeout"
)

// missing lists what cfg needs that c does not declare.
func (c Capabilities) missing(cfg Config, set map[string]bool) []string {
	var out []string
	if !slices.Contains(c.Network, cfg.Network.Mode) {
		out = append(out, "network mode "+cfg.Network.Mode)
	}
	if !slices.Contains(c.Scopes, cfg.Scope) {
		out = append(out, "scope "+cfg.Scope)
	}
	// Every budget has a default, so every one is always needed.
	for _, b := range []string{BudgetMemory, BudgetCPU, BudgetPids, BudgetOutput, BudgetScratch, BudgetTimeout} {
		if !slices.Contains(c.Budgets, b) {
			out = append(out, "budget "+b)
		}
	}
	if set["image"] && !c.Image {
		out = append(out, "images (remove image =)")
	}
	if !set["image"] && c.Image {
		out = append(out, "an image (set image = \"sha256:…\")")
	}
	if set["profile"] && !c.Profiles {
		out = append(out, "airlock profiles (remove profile =)")
	}
	return out
}
