package profile

import (
	"fmt"
	"math/bits"
	"strings"
)

// Guarantee is one property a sandbox can give a command, or a set of them
// (the values are bits). A Profile lists the ones it requires, and the sandbox's
// Report says which ones the host actually enforces.
type Guarantee uint32

const (
	ReadBoundary        Guarantee = 1 << iota // reads outside the profile's paths fail
	WriteBoundary                             // writes outside the profile's paths fail
	ProcessIsolation                          // host processes are invisible and unsignalable
	IPCIsolation                              // no SysV IPC, abstract sockets or host sockets shared
	NetworkNone                               // no network interface but loopback-less isolation
	NetworkFiltered                           // every connection filtered by host:port
	PrivateRangeBlock                         // private and metadata addresses refused
	SyscallFilter                             // dangerous syscalls refused by seccomp
	NoNewPrivs                                // setuid binaries and file caps give nothing
	ResourceLimits                            // memory, pids and cpu capped by cgroups
	LifetimeContainment                       // the whole process tree dies with the run
	EnvScrub                                  // only allowlisted environment reaches the command
	DenyNewFiles                              // deny entries also refuse files that appear after the start
	ProtectedPaths                            // agent-persistence paths (git config and hooks, .vscode, ...) cannot be planted for host tools
	ExecBoundary                              // programs run only from the profile's exec paths (when it names them)

	guaranteeEnd
)

var guaranteeNames = map[Guarantee]string{
	ReadBoundary:        "read-boundary",
	WriteBoundary:       "write-boundary",
	ProcessIsolation:    "process-isolation",
	IPCIsolation:        "ipc-isolation",
	NetworkNone:         "network-none",
	NetworkFiltered:     "network-filtered",
	PrivateRangeBlock:   "private-range-block",
	SyscallFilter:       "syscall-filter",
	NoNewPrivs:          "no-new-privs",
	ResourceLimits:      "resource-limits",
	LifetimeContainment: "lifetime-containment",
	EnvScrub:            "env-scrub",
	DenyNewFiles:        "deny-new-files",
	ProtectedPaths:      "protected-paths",
	ExecBoundary:        "exec-boundary",
}

// AllGuarantees lists every guarantee in a stable order.
func AllGuarantees() []Guarantee {
	out := make([]Guarantee, 0, bits.OnesCount32(uint32(guaranteeEnd-1)))
	for g := Guarantee(1); g < guaranteeEnd; g <<= 1 {
		out = append(out, g)
	}
	return out
}

// Has reports whether every bit of o is in g.
func (g Guarantee) Has(o Guarantee) bool { return g&o == o }

// List returns the single guarantees of the set in stable order.
func (g Guarantee) List() []Guarantee {
	var out []Guarantee
	for _, one := range AllGuarantees() {
		if g.Has(one) {
			out = append(out, one)
		}
	}
	return out
}

// String names a single guarantee, or joins a set with commas.
func (g Guarantee) String() string {
	if n, ok := guaranteeNames[g]; ok {
		return n
	}
	var parts []string
	for _, one := range g.List() {
		parts = append(parts, guaranteeNames[one])
	}
	return strings.Join(parts, ",")
}

// ParseGuarantee reads a guarantee name such as "syscall-filter".
func ParseGuarantee(name string) (Guarantee, error) {
	for g, n := range guaranteeNames {
		if n == name {
			return g, nil
		}
	}
	var names []string
	for _, g := range AllGuarantees() {
		names = append(names, guaranteeNames[g])
	}
	return 0, fmt.Errorf("unknown guarantee %q; known: %s", name, strings.Join(names, ", "))
}

// MarshalText writes the guarantee name.
func (g Guarantee) MarshalText() ([]byte, error) { return []byte(g.String()), nil }
