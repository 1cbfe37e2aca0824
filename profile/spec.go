package profile

import (
	"fmt"
	"strings"
	"time"
)

// Spec is the editable description of a profile. The zero value of each
// field means "not set": New fills it from nothing (no access), and Merge
// leaves the base's value in place.
type Spec struct {
	// Preset names the preset the spec started from (informational; it is
	// part of the fingerprint).
	Preset string `toml:"preset" json:"preset,omitempty"`
	// Workspace is the absolute path of the project the command works on.
	Workspace string `toml:"workspace" json:"workspace"`
	// ForceWorkspace accepts a workspace New would refuse as too broad:
	// the caller's home or one of its ancestors, a system directory
	// (/etc, /usr, /var, ...) or a shared root (/home, /tmp, ...). The
	// host's /proc, /sys and /dev, and "/", are refused even so. A file
	// cannot set it: forcing is the caller's decision for one invocation.
	ForceWorkspace bool `toml:"-" json:"force_workspace,omitempty"`
	// ReadOnlyWorkspace makes the workspace readable but not writable.
	ReadOnlyWorkspace bool `toml:"read_only_workspace" json:"read_only_workspace,omitempty"`
	// AutoAllowInSandbox says whether the gate allows, without asking, a
	// command no rule mentions when it will run inside the sandbox (the
	// sandbox confines it). Nil leaves it to the surface: where every
	// command runs in the sandbox (airlock mcp serve, the Claude Code
	// hook's sandboxed Bash) it is on; elsewhere off. A pointer, so that a
	// layer's explicit false overrides a true beneath it.
	AutoAllowInSandbox *bool `toml:"auto_allow_in_sandbox" json:"auto_allow_in_sandbox,omitempty"`

	Filesystem FilesystemSpec `toml:"filesystem" json:"filesystem"`
	Env        EnvSpec        `toml:"env" json:"env"`
	Network    NetworkSpec    `toml:"network" json:"network"`
	Budgets    Budgets        `toml:"budgets" json:"budgets"`
	// Require lists guarantees the host must give, by name
	// ("syscall-filter", ...). A host that cannot give one makes sandbox
	// construction fail before anything runs.
	Require []string `toml:"require" json:"require,omitempty"`
	// Enforced lists how each deny rule of the workspace is enforced
	// (package workspace fills it with the fields it compiles from the
	// rules). It is informational but fingerprinted; a file cannot set it.
	Enforced []RuleEnforcement `toml:"-" json:"enforced,omitempty"`
}

// FilesystemSpec lists paths. Every path is absolute after New ("~/" is
// expanded against the caller's home; relative paths are an error).
type FilesystemSpec struct {
	// Read paths are visible read-only (beneath each, recursively).
	Read []string `toml:"read" json:"read,omitempty"`
	// Write paths are visible read-write.
	Write []string `toml:"write" json:"write,omitempty"`
	// Deny globs hide matching paths even beneath Read and Write paths.
	// "**" matches any number of directories. A relative glob is taken
	// relative to the workspace.
	Deny []string `toml:"deny" json:"deny,omitempty"`
	// Protected paths, relative to the workspace, stay read-only even when
	// the workspace is writable (agent persistence: hooks, editor configs).
	Protected []string `toml:"protected" json:"protected,omitempty"`
	// Exec paths are where programs may be executed from. Empty means the
	// read and write paths.
	Exec []string `toml:"exec" json:"exec,omitempty"`
	// Sockets are host unix sockets (pathname, stream or seqpacket) the
	// command may connect to, each bound into the view at its path. No
	// other host socket is reachable, wherever it lies; sockets the
	// command creates itself always are.
	Sockets []string `toml:"sockets" json:"sockets,omitempty"`
}

// EnvSpec says which environment variables reach the command.
type EnvSpec struct {
	// Allow names variables passed through from the caller; a trailing "*"
	// matches a prefix (LC_*).
	Allow []string `toml:"allow" json:"allow,omitempty"`
	// Set forces variables to a value.
	Set map[string]string `toml:"set" json:"set,omitempty"`
}

// Network modes.
const (
	NetworkModeNone  = "none"  // no interface at all
	NetworkModeAll   = "all"   // unrestricted, but metadata addresses blocked
	NetworkModeAllow = "allow" // only the hosts in Allow (the egress layer)
)

// NetworkSpec is the network policy.
type NetworkSpec struct {
	// Mode is none, all or allow. Empty means none.
	Mode string `toml:"mode" json:"mode,omitempty"`
	// Allow lists host[:port] entries for mode "allow" (TCP; no port
	// means 80 and 443), and host:port/udp entries for UDP, which always
	// name their port. With mode "all" it lists the IP literals that stay
	// reachable, in the same forms. New writes each entry in one
	// spelling: "/tcp" is dropped, "/UDP" becomes "/udp".
	Allow []string `toml:"allow" json:"allow,omitempty"`
	// Deny lists host[:port] entries the egress layer refuses in every
	// mode, before Allow is looked at: DNS names (the DNS server does not
	// answer a name denied on every port), "*.suffix" wildcards and IP
	// literals. No port means every port; an entry covers TCP and UDP.
	// Package workspace fills it from a workspace's Net and WebFetch
	// deny rules.
	Deny []string `toml:"deny" json:"deny,omitempty"`
	// PublishAddresses lists the host addresses besides loopback that a
	// published port (airlock run --publish ADDR:HOST_PORT:PORT) may
	// listen on: IP literals, "0.0.0.0" or "::" for every address. Empty
	// means loopback only, so nothing off this machine reaches the
	// command unless the profile says so. New writes each address in
	// its canonical form.
	PublishAddresses []string `toml:"publish_addresses" json:"publish_addresses,omitempty"`
}

// Protocols of a network.allow entry.
const (
	networkTCP = "tcp"
	networkUDP = "udp"
)

// cutProtocol splits a network.allow entry into its host[:port] and its
// protocol: udp for an entry ending in "/udp", else tcp (which "/tcp"
// may say explicitly). Both suffixes are matched in any case.
func cutProtocol(entry string) (hostPort, proto string) {
	if i := strings.LastIndexByte(entry, '/'); i >= 0 {
		switch p := strings.ToLower(entry[i+1:]); p {
		case networkTCP, networkUDP:
			return entry[:i], p
		}
	}
	return entry, networkTCP
}

// canonicalEntry is entry in the one spelling New keeps.
func canonicalEntry(entry string) string {
	hostPort, proto := cutProtocol(entry)
	if proto == networkUDP {
		return hostPort + "/udp"
	}
	return hostPort
}

// Budgets cap what one run may use. Zero means no limit of that kind
// (except where a preset sets one).
type Budgets struct {
	Memory   Size     `toml:"memory" json:"memory,omitempty"`       // RAM, no swap
	Pids     int      `toml:"pids" json:"pids,omitempty"`           // tasks at once
	CPU      float64  `toml:"cpu" json:"cpu,omitempty"`             // cores (1.5 = one and a half)
	WallTime Duration `toml:"wall_time" json:"wall_time,omitempty"` // whole run
	Output   Size     `toml:"output" json:"output,omitempty"`       // stdout+stderr bytes kept
	// Scratch bounds the private HOME, /tmp and /dev/shm together: one
	// tmpfs holds all three. Without a cgroup it is also held to the
	// memory budget, which cannot see it otherwise.
	Scratch Size `toml:"scratch" json:"scratch,omitempty"`
	// MaxWrite bounds the bytes the command may add to the workspace and
	// the write paths (their growth in allocated blocks); the run ends
	// with status limit_exceeded past it, and no single file may grow
	// past it.
	MaxWrite Size `toml:"max_write" json:"max_write,omitempty"`
}

// Duration is a time.Duration written as "30s", "5m" in TOML.
type Duration time.Duration

// UnmarshalText reads a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil || v < 0 {
		return fmt.Errorf("%q is not a duration; use a number with a unit like 30s or 5m", string(b))
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes the duration as time.Duration's String.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// Merge returns base with every field that o sets replacing base's. Lists
// given in o are appended to base's lists, so a file can add read paths to
// a preset without restating it.
func Merge(base, o Spec) Spec {
	out := base.clone()
	if o.Preset != "" {
		out.Preset = o.Preset
	}
	if o.Workspace != "" {
		out.Workspace = o.Workspace
	}
	out.ReadOnlyWorkspace = out.ReadOnlyWorkspace || o.ReadOnlyWorkspace
	out.ForceWorkspace = out.ForceWorkspace || o.ForceWorkspace
	if o.AutoAllowInSandbox != nil {
		v := *o.AutoAllowInSandbox
		out.AutoAllowInSandbox = &v
	}
	out.Filesystem.Read = append(out.Filesystem.Read, o.Filesystem.Read...)
	out.Filesystem.Write = append(out.Filesystem.Write, o.Filesystem.Write...)
	out.Filesystem.Deny = append(out.Filesystem.Deny, o.Filesystem.Deny...)
	out.Filesystem.Protected = append(out.Filesystem.Protected, o.Filesystem.Protected...)
	out.Filesystem.Exec = append(out.Filesystem.Exec, o.Filesystem.Exec...)
	out.Filesystem.Sockets = append(out.Filesystem.Sockets, o.Filesystem.Sockets...)
	out.Env.Allow = append(out.Env.Allow, o.Env.Allow...)
	for k, v := range o.Env.Set {
		if out.Env.Set == nil {
			out.Env.Set = map[string]string{}
		}
		out.Env.Set[k] = v
	}
	// A layer that keeps the mode adds to the allowlist (--net HOST over a
	// file's allow list); one that changes it starts the list anew, as
	// entries mean different things in each mode.
	if o.Network.Mode != "" && o.Network.Mode != out.Network.Mode {
		out.Network.Mode = o.Network.Mode
		out.Network.Allow = nil
	}
	out.Network.Allow = append(out.Network.Allow, o.Network.Allow...)
	// Deny entries hold in every mode, so a layer that changes the mode
	// keeps them.
	out.Network.Deny = append(out.Network.Deny, o.Network.Deny...)
	out.Network.PublishAddresses = append(out.Network.PublishAddresses, o.Network.PublishAddresses...)
	b := &out.Budgets
	if o.Budgets.Memory != 0 {
		b.Memory = o.Budgets.Memory
	}
	if o.Budgets.Pids != 0 {
		b.Pids = o.Budgets.Pids
	}
	if o.Budgets.CPU != 0 {
		b.CPU = o.Budgets.CPU
	}
	if o.Budgets.WallTime != 0 {
		b.WallTime = o.Budgets.WallTime
	}
	if o.Budgets.Output != 0 {
		b.Output = o.Budgets.Output
	}
	if o.Budgets.Scratch != 0 {
		b.Scratch = o.Budgets.Scratch
	}
	if o.Budgets.MaxWrite != 0 {
		b.MaxWrite = o.Budgets.MaxWrite
	}
	out.Require = append(out.Require, o.Require...)
	out.Enforced = append(out.Enforced, o.Enforced...)
	return out
}

func (s Spec) clone() Spec {
	out := s
	out.Filesystem.Read = append([]string(nil), s.Filesystem.Read...)
	out.Filesystem.Write = append([]string(nil), s.Filesystem.Write...)
	out.Filesystem.Deny = append([]string(nil), s.Filesystem.Deny...)
	out.Filesystem.Protected = append([]string(nil), s.Filesystem.Protected...)
	out.Filesystem.Exec = append([]string(nil), s.Filesystem.Exec...)
	out.Filesystem.Sockets = append([]string(nil), s.Filesystem.Sockets...)
	out.Env.Allow = append([]string(nil), s.Env.Allow...)
	if s.Env.Set != nil {
		out.Env.Set = make(map[string]string, len(s.Env.Set))
		for k, v := range s.Env.Set {
			out.Env.Set[k] = v
		}
	}
	out.Network.Allow = append([]string(nil), s.Network.Allow...)
	out.Network.Deny = append([]string(nil), s.Network.Deny...)
	out.Require = append([]string(nil), s.Require...)
	if s.AutoAllowInSandbox != nil {
		v := *s.AutoAllowInSandbox
		out.AutoAllowInSandbox = &v
	}
	out.Enforced = append([]RuleEnforcement(nil), s.Enforced...)
	return out
}
