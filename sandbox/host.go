package sandbox

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox/internal/guard"
	"github.com/airlockhq/airlock/sandbox/internal/linux"
	"github.com/airlockhq/airlock/sandbox/internal/linux/landlock"
	"github.com/airlockhq/airlock/sandbox/internal/linux/seccomp"
)

// HostInfo is what this host offers the sandbox, read without running
// anything.
type HostInfo struct {
	Kernel         string `json:"kernel"`
	Arch           string `json:"arch"`
	UID            int    `json:"uid"`
	UserNamespaces bool   `json:"user_namespaces"`
	UserNSReason   string `json:"user_namespaces_reason,omitempty"`
	LandlockABI    int    `json:"landlock_abi"`
	// LandlockFeatures lists what the sandbox asks of Landlock and
	// whether this kernel's ABI gives it.
	LandlockFeatures []LandlockFeature `json:"landlock_features"`
	Seccomp          bool              `json:"seccomp"`
	SeccompReason    string            `json:"seccomp_reason,omitempty"`
	// SeccompBlocked says what the syscall filter refuses on this arch.
	SeccompBlocked []string `json:"seccomp_blocked,omitempty"`
	CgroupMode     string   `json:"cgroup_mode"`
	CgroupWritable bool     `json:"cgroup_writable"`
	CgroupReason   string   `json:"cgroup_reason,omitempty"`
	// CgroupDelegated lists the delegated cgroups (ancestors of this
	// process's own, writable by it) the runs' cgroups are made in.
	CgroupDelegated []string `json:"cgroup_delegated,omitempty"`
	// Tun: /dev/net/tun opens, so the egress layer can give a sandbox a
	// TAP device (network allowlists, and private-range blocking for
	// network "all").
	Tun       bool   `json:"tun"`
	TunReason string `json:"tun_reason,omitempty"`
	// FanotifyPerm: this process may answer fanotify permission events
	// (CAP_SYS_ADMIN in the initial user namespace), so deny entries can
	// cover files that appear after the start (denywatch.go).
	FanotifyPerm   bool   `json:"fanotify_permission"`
	FanotifyReason string `json:"fanotify_reason,omitempty"`
	// UnixGuard: the supervisor can stop and carry out the sandbox's
	// connects (seccomp user notification, pidfd_getfd), so no host unix
	// socket but the profile's is reachable (unixguard.go).
	UnixGuard       bool   `json:"unix_socket_guard"`
	UnixGuardReason string `json:"unix_socket_guard_reason,omitempty"`
	// KillableWait: a call the notifier stops (a create under the create
	// guard, a connect) waits for the supervisor without a signal
	// interrupting it (Linux 5.19), as the call would without airlock.
	KillableWait bool `json:"notifier_killable_wait"`
	// CreateGuard: the supervisor can also stop the sandbox's name-making
	// calls and hand back what it opened for them (createguard.go).
	CreateGuard       bool   `json:"create_guard"`
	CreateGuardReason string `json:"create_guard_reason,omitempty"`
	// SystemIDMap: a root supervisor shows the system paths id-mapped,
	// so that root's own files there are not the command's
	// (systemidmap.go). Only root needs it.
	SystemIDMap       bool   `json:"system_idmap,omitempty"`
	SystemIDMapReason string `json:"system_idmap_reason,omitempty"`

	cgroups linux.CgroupLayout
	// idmapTrees: the probe's id-mapped trees, for the first run.
	idmapTrees *probedTrees
}

// LandlockFeature is one Landlock feature the sandbox uses, with the ABI
// that introduced it and whether this kernel enforces it.
type LandlockFeature struct {
	Name     string `json:"name"`
	MinABI   int    `json:"min_abi"`
	Enforced bool   `json:"enforced"`
	Reason   string `json:"reason,omitempty"`
}

// ProbeHost reads the host's kernel, namespaces, Landlock ABI, seccomp and
// cgroup layout.
func ProbeHost() HostInfo { return probeHost(nil) }

// probeHost is ProbeHost; early, when not nil, is called with what a
// helper's clone needs (user namespaces, the TUN and cgroup probes)
// before the slowest probe, the system paths' id-mapped trees, so New
// can start the clone of its warm helper beside it.
func probeHost(early func(HostInfo)) HostInfo {
	h := HostInfo{Arch: runtime.GOARCH, UID: os.Getuid()}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		h.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	h.UserNamespaces, h.UserNSReason = probeUserNS(h.UID)
	h.LandlockABI = landlock.ABI()
	plan := landlock.Plan(landlock.Ruleset{ScopeSignals: true, ScopeAbstractUnix: true})
	for _, f := range plan.Features {
		h.LandlockFeatures = append(h.LandlockFeatures, LandlockFeature(f))
	}
	h.Seccomp, h.SeccompReason = seccomp.Available()
	if h.Seccomp {
		h.SeccompBlocked = seccomp.Blocked()
	}
	h.cgroups = linux.ProbeCgroups()
	found := guard.ProbeAll(guard.Host{Kernel: h.Kernel, Seccomp: guard.Availability{OK: h.Seccomp, Reason: h.SeccompReason}})
	for name, a := range found {
		ok, why := h.guardFields(name)
		*ok, *why = a.OK, a.Reason
	}
	h.KillableWait = seccomp.KillableWait(h.Kernel)
	h.CgroupMode, h.CgroupWritable, h.CgroupReason = h.cgroups.Mode, h.cgroups.Writable, h.cgroups.Reason
	h.CgroupDelegated = h.cgroups.Delegated
	if early != nil {
		early(h)
	}
	h.SystemIDMap, h.SystemIDMapReason, h.idmapTrees = probeSystemIDMap(h.UID)
	return h
}

// guardFields are the fields of h that hold a guard's probe.
func (h *HostInfo) guardFields(n guard.Name) (ok *bool, reason *string) {
	switch n {
	case guard.Tun:
		return &h.Tun, &h.TunReason
	case guard.Fanotify:
		return &h.FanotifyPerm, &h.FanotifyReason
	case guard.UnixSocket:
		return &h.UnixGuard, &h.UnixGuardReason
	case guard.Create:
		return &h.CreateGuard, &h.CreateGuardReason
	}
	panic("sandbox: HostInfo has no field for guard " + string(n))
}

func probeUserNS(uid int) (bool, string) {
	if _, err := os.Stat("/proc/self/ns/user"); err != nil {
		return false, "kernel built without user namespaces"
	}
	if n := readInt("/proc/sys/user/max_user_namespaces"); n == 0 {
		return false, "user.max_user_namespaces is 0; raise it with sysctl"
	}
	if uid != 0 {
		if readInt("/proc/sys/kernel/unprivileged_userns_clone") == 0 {
			return false, "kernel.unprivileged_userns_clone is 0; set it to 1 with sysctl"
		}
		if readInt("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1 {
			return false, "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1); add an AppArmor profile for airlock or set it to 0"
		}
	}
	return true, ""
}

// readInt reads a number from a /proc file; -1 when it cannot.
func readInt(path string) int {
	b, err := linux.ReadKernelFile(path)
	if err != nil {
		return -1
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return v
}

// reportFor says what the sandbox enforces for p on host h.
func reportFor(p *profile.Profile, h HostInfo) Report {
	s := p.Spec()
	ns := h.UserNamespaces
	nsWhy := "user namespaces unavailable: " + h.UserNSReason
	ll := h.LandlockABI > 0
	var gs []GuaranteeStatus
	add := func(g profile.Guarantee, st Enforcement, mech, why string) {
		gs = append(gs, GuaranteeStatus{Guarantee: g, Status: st, Mechanism: mech, Reason: why})
	}
	boundary := func(g profile.Guarantee) {
		switch {
		case !ns:
			add(g, Unavailable, "", nsWhy)
		case !ll:
			add(g, Degraded, "mount namespace view", "Landlock unavailable on kernel "+h.Kernel)
		default:
			add(g, Enforced, fmt.Sprintf("mount namespace view + landlock ABI %d", h.LandlockABI), "")
		}
	}
	boundary(profile.ReadBoundary)
	gs[len(gs)-1] = rootReadStatus(gs[len(gs)-1], h)
	boundary(profile.WriteBoundary)
	gs = append(gs, denyNewFilesStatus(s, h))
	gs = append(gs, createGuardNote(protectedPathsStatus(s, h), h))

	switch {
	case !ns:
		add(profile.ProcessIsolation, Unavailable, "", nsWhy)
	case h.LandlockABI >= 6:
		add(profile.ProcessIsolation, Enforced, "pid namespace + landlock signal scope", "")
	default:
		add(profile.ProcessIsolation, Enforced, "pid namespace", "")
	}
	gateway := ns && usesGateway(s.Network, h)
	ownNetNS := s.Network.Mode == profile.NetworkModeNone || gateway
	ipcMech := "ipc namespace"
	if ownNetNS {
		ipcMech += " + network namespace (abstract sockets)"
	}
	switch {
	case !ns:
		add(profile.IPCIsolation, Unavailable, "", nsWhy)
	case h.LandlockABI >= 6:
		add(profile.IPCIsolation, Enforced, ipcMech+" + landlock abstract-socket scope", "")
	case ownNetNS:
		add(profile.IPCIsolation, Enforced, ipcMech, "")
	default:
		add(profile.IPCIsolation, Degraded, ipcMech, "host abstract unix sockets reachable: the network is shared and Landlock ABI < 6")
	}
	gs[len(gs)-1] = ipcUnixStatus(gs[len(gs)-1], h)

	switch s.Network.Mode {
	case profile.NetworkModeNone:
		if ns {
			add(profile.NetworkNone, Enforced, "network namespace with loopback only", "")
			add(profile.NetworkFiltered, NotApplied, "", "no network at all")
			add(profile.PrivateRangeBlock, Enforced, "network namespace with loopback only", "")
		} else {
			add(profile.NetworkNone, Unavailable, "", nsWhy)
			add(profile.NetworkFiltered, NotApplied, "", "no network at all")
			add(profile.PrivateRangeBlock, Unavailable, "", nsWhy)
		}
	case profile.NetworkModeAll:
		add(profile.NetworkNone, NotApplied, "", "profile allows all networking")
		add(networkDenyStatus(s.Network, h, gateway, ns, nsWhy))
		switch {
		case gateway:
			add(profile.PrivateRangeBlock, Enforced, egressMechanism+"; every public address allowed", "")
		case !ns:
			add(profile.PrivateRangeBlock, Unavailable, "", nsWhy)
		default:
			add(profile.PrivateRangeBlock, Unavailable, "", "network all needs a TAP device, else it would be the host's network (private ranges and the host's loopback reachable), so runs refuse to start: "+h.TunReason)
		}
	default:
		add(profile.NetworkNone, NotApplied, "", "profile allows listed hosts")
		switch {
		case !ns:
			add(profile.NetworkFiltered, Unavailable, "", nsWhy)
			add(profile.PrivateRangeBlock, Unavailable, "", nsWhy)
		case !h.Tun:
			add(profile.NetworkFiltered, Unavailable, "", "host:port allowlists need a TAP device: "+h.TunReason)
			add(profile.PrivateRangeBlock, Unavailable, "", "needs a TAP device: "+h.TunReason)
		default:
			add(profile.NetworkFiltered, Enforced, egressMechanism+"; TCP by host:port, DNS by name, UDP by host:port/udp entries, ICMP refused"+denyMechanism(s.Network), "")
			add(profile.PrivateRangeBlock, Enforced, egressMechanism+"; answers and connections to private and metadata addresses refused", "")
		}
	}

	if h.Seccomp {
		add(profile.SyscallFilter, Enforced, "seccomp-bpf ("+h.Arch+")", "")
	} else {
		add(profile.SyscallFilter, Unavailable, "", h.SeccompReason)
	}
	add(profile.NoNewPrivs, Enforced, "no_new_privs + empty capability sets + nosuid mounts", "")

	budgets := budgetStatuses(s, h)
	gs = append(gs, resourceLimitsStatus(s, budgets, h))
	switch {
	case !ns:
		add(profile.LifetimeContainment, Unavailable, "", nsWhy)
	case h.CgroupWritable:
		add(profile.LifetimeContainment, Enforced, "pid namespace + cgroup kill + PDEATHSIG", "")
	default:
		add(profile.LifetimeContainment, Enforced, "pid namespace + PDEATHSIG", "")
	}
	add(profile.EnvScrub, Enforced, "environment built from the allowlist", "")
	gs = append(gs, execBoundaryStatus(s, h))
	return Report{Level: levelOf(gs), Guarantees: gs, Budgets: budgets, Silent: silentRefusals(s, h), Rules: s.Enforced, Host: h}
}

// egressMechanism is how network filtering works for every program, proxy
// variables or not: the sandbox's only interface is a TAP device, and
// every packet on it ends in the supervisor's userspace TCP/IP stack.
// With Landlock ABI 4, TCP connects also stop at a seccomp notifier and
// the supervisor makes the ones the gateway allows itself (connect.go),
// by the same decision; that changes speed, not what is allowed.
const egressMechanism = "network namespace whose only interface is a TAP device served by the supervisor's egress gateway (gVisor netstack), for every program"

// ReportFor says what an Executor for p would enforce on this host,
// without requiring anything (New fails where this only reports).
func ReportFor(p *profile.Profile) Report {
	h := ProbeHost()
	defer h.idmapTrees.close()
	return reportFor(p, h)
}
