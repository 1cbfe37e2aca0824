package linux

import "github.com/airlockhq/airlock/sandbox/internal/linux/landlock"

// Config is everything the stage-2 helper needs, sent by the supervisor
// in its own encoding (configwire.go, not JSON: the tags are for tests
// and dumps) over the helper's config socket, with the run's descriptors
// (Handoff). Paths are absolute and the same inside and outside
// the sandbox (the mount view mirrors the host's layout).
type Config struct {
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	Dir  string   `json:"dir"`
	// Handoff is where the helper puts the descriptors that came with
	// the config, in the order they came: the run's own (its stdin, the
	// guards' ends, the id-mapped trees...), which the helper was cloned
	// without (it may have been cloned before the run existed). Every
	// other descriptor number in the Config is one of these.
	Handoff []int `json:"handoff,omitempty"`

	Mounts   []Mount `json:"mounts"`   // applied in order on a fresh tmpfs root
	Hostname string  `json:"hostname"` // set in the new UTS namespace

	Landlock LandlockConfig `json:"landlock"`
	Rlimits  []Rlimit       `json:"rlimits"`
	Seccomp  bool           `json:"seccomp"`
	// ExecGuard adds seccomp.BuildExecGuard after the main filter: no
	// anonymous files to run, for a profile that names its exec paths.
	ExecGuard bool `json:"exec_guard,omitempty"`
	// LoopbackUp brings "lo" up in a new network namespace.
	LoopbackUp bool `json:"loopback_up"`
	// Network, when set, gives the new network namespace a TAP device
	// served by the supervisor's egress gateway (see tap.go).
	Network *NetworkConfig `json:"network,omitempty"`
	// Notifier, when set, installs the connect notifier and hands its
	// listener to the supervisor (see notifier.go).
	Notifier *NotifierConfig `json:"notifier,omitempty"`
	// DenyWatch, when set, hands the supervisor the view's mounts where
	// deny entries can match, to refuse opens of files that appear after
	// the start (see denymounts.go).
	DenyWatch *DenyWatchConfig `json:"deny_watch,omitempty"`
	// JoinCgroup lists the cgroup v1 "tasks" files the helper's thread
	// moves itself into before anything else (see JoinSelf).
	JoinCgroup []string `json:"join_cgroup,omitempty"`
	// NewCgroupNS unshares the cgroup namespace after the supervisor has
	// placed the helper in its cgroup, so the run's cgroup is its root.
	NewCgroupNS bool `json:"new_cgroup_ns"`
	// NewSession detaches from the caller's controlling terminal.
	NewSession bool `json:"new_session"`
	// StatusFD is the helper's descriptor where its init reports a
	// command that died of a signal (init.go); 0: none.
	StatusFD int `json:"status_fd,omitempty"`
	// PTY, when set, gives the command a terminal of its own (pty.go).
	PTY *PTYConfig `json:"pty,omitempty"`
	// PublishFD, when not 0, is a unix socket on which the init makes
	// TCP sockets of the sandbox's network namespace (publish.go).
	PublishFD int `json:"publish_fd,omitempty"`
}

// Mount kinds.
const (
	MountBind    = "bind"    // bind Source at Target
	MountTmpfs   = "tmpfs"   // fresh tmpfs at Target, Size bytes (0: default)
	MountProc    = "proc"    // fresh proc for the new pid namespace
	MountDevpts  = "devpts"  // new devpts instance
	MountSymlink = "symlink" // symlink at Target pointing to Source
	MountMask    = "mask"    // hide Target: empty read-only dir or unreadable file
	MountDir     = "dir"     // create an empty directory
	// MountFile binds a read-only file holding Content at Target. The
	// helper writes it on the view's own tmpfs, never on the host.
	MountFile = "file"
	// MountScratch binds the directory Source of the run's one scratch
	// tmpfs at Target (mode Mode). The first such mount creates that
	// tmpfs, of Size bytes and Inodes inodes, so every scratch path
	// shares one bound (see scratch.go).
	MountScratch = "scratch"
	// MountReadOnly makes a path already in the view read-only, by
	// cloning the view's own mount there (never a host path, so a
	// symlink in the workspace cannot swap in another file).
	MountReadOnly = "readonly"
	// MountPin clones the view's own mount at Target onto itself,
	// writable as it was: the path becomes a mount point, which the
	// sandbox can neither rename, remove nor replace (EBUSY), while what
	// is inside stays writable. Used for repositories' git directories.
	MountPin = "pin"
)

// Mount is one step of building the mount view.
type Mount struct {
	Kind     string `json:"kind"`
	Source   string `json:"source,omitempty"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"ro,omitempty"`
	NoExec   bool   `json:"noexec,omitempty"`
	// Optional: skip silently when Source does not exist (system paths
	// differ between distributions).
	Optional bool   `json:"optional,omitempty"`
	Size     int64  `json:"size,omitempty"`
	Inodes   int64  `json:"inodes,omitempty"` // nr_inodes of a tmpfs (0: the kernel's default)
	Mode     uint32 `json:"mode,omitempty"`
	// Content of a MountFile.
	Content string `json:"content,omitempty"`
	// TreeFD, for a MountBind, is an inherited descriptor of a detached
	// tree the supervisor made of Source (id-mapped, idmap.go), with
	// Mount's flags already set; moved into the view instead of a clone.
	TreeFD int `json:"tree_fd,omitempty"`
}

// LandlockConfig mirrors landlock.Ruleset; Enabled false skips Landlock
// (only when the supervisor found it unavailable and the profile allows
// running without it).
type LandlockConfig struct {
	Enabled bool `json:"enabled"`
	// Rules are the supervisor's plan (landlock.Ruleset.Compile), applied
	// in order before the lists' rules.
	Rules             []landlock.Rule `json:"rules,omitempty"`
	Read              []string        `json:"read,omitempty"`
	List              []string        `json:"list,omitempty"`
	Write             []string        `json:"write,omitempty"`
	Exec              []string        `json:"exec,omitempty"`
	IoctlDev          []string        `json:"ioctl_dev,omitempty"`
	ScopeSignals      bool            `json:"scope_signals,omitempty"`
	ScopeAbstractUnix bool            `json:"scope_abstract_unix,omitempty"`
}

// Rlimit is one resource limit (soft = hard).
type Rlimit struct {
	Resource int    `json:"resource"`
	Value    uint64 `json:"value"`
}
