package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox/internal/linux"
	"github.com/airlockhq/airlock/sandbox/internal/linux/landlock"
)

// Paths inside every sandbox.
const (
	sandboxTmp      = "/tmp"
	defaultPath     = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
	sandboxHostname = "airlock"
)

// devices bound from the host into the sandbox's /dev; nothing else of
// the host's /dev is visible (no block devices, no /dev/mem, no kmsg).
var devices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// plan is the compiled form of one run.
type plan struct {
	config linux.Config
	home   string
	// protect is what the run protects: read-only or pinned in the view,
	// and checked at its end (protect.go, gitrepos.go).
	protect protectPlan
	// denyWatch, when set, is what the supervisor watches for files that
	// appear after the start at denied paths (denywatch.go).
	denyWatch *denyWatchPlan
	// linksMasked counts the shared hard links masked past
	// maxSharedLinks (mask.go).
	linksMasked int
	// links, when set, is the hard-link check the supervisor makes at
	// each open in the workspace instead of masks (linkwatch.go).
	links *linkCheck
	// deny is every deny entry, resolved on the host as the run was
	// compiled (resolvedGlobs); the deny watch judges by them, so the
	// host's symlinks are read once a run, not again after the clone.
	deny []denyGlob
}

// compile turns the profile and cmd into the stage-2 Config. guarded:
// the create guard will hold the run (planProtection); o says what the
// supervisor checks at the call, which the masks need not cover.
func compile(p *profile.Profile, cmd Cmd, guarded bool, o maskOptions) (*plan, error) {
	s := p.Spec()
	ws := s.Workspace
	home := sandboxHome(s)

	dir := cmd.Dir
	if dir == "" {
		dir = ws
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(ws, dir)
	}
	dir = filepath.Clean(dir)
	if !p.CanRead(dir) && dir != home && dir != sandboxTmp && !profile.Within(home, dir) && !profile.Within(sandboxTmp, dir) {
		return nil, &SetupError{Step: "working directory", Err: fmt.Errorf("%s is not visible in the sandbox; use a directory inside the workspace %s", dir, ws)}
	}

	var binds []linux.Mount
	for _, r := range s.Filesystem.Read {
		binds = append(binds, pathMount(r, true))
	}
	for _, w := range s.Filesystem.Write {
		binds = append(binds, pathMount(w, false))
	}
	scratch := scratchFor(s.Budgets)
	binds = append(binds,
		scratch.mount("home", home, 0o700),
		scratch.mount("tmp", sandboxTmp, 0o1777),
		linux.Mount{Kind: linux.MountBind, Source: ws, Target: ws, ReadOnly: s.ReadOnlyWorkspace},
	)
	binds = append(binds, socketMounts(s.Filesystem.Sockets)...)
	strictExec := len(s.Filesystem.Exec) > 0
	if strictExec {
		binds = append(binds, markNoExec(binds, s.Filesystem.Exec)...)
	}
	// Parents before children: a deeper mount must land on top of the
	// one that contains it.
	sort.SliceStable(binds, func(i, j int) bool { return depth(binds[i].Target) < depth(binds[j].Target) })

	// Protected paths: what exists now is read-only (or, for git
	// directories, pinned) in the view; the rest is checked at the end.
	prot := planProtection(s, guarded)
	mounts := append(binds, protectMounts(prot)...)
	masks, shared, overflow, err := maskedPaths(p, o)
	if err != nil {
		return nil, err
	}
	for _, m := range shared {
		mounts = append(mounts, linux.Mount{Kind: linux.MountReadOnly, Target: m, Optional: true})
	}
	for _, m := range masks {
		mounts = append(mounts, linux.Mount{Kind: linux.MountMask, Target: m})
	}
	dev := devMounts(scratch)
	if strictExec {
		markNoExec(dev, s.Filesystem.Exec)
	}
	mounts = append(mounts, dev...)
	mounts = append(mounts, procMounts()...)

	// Read-only roots beneath which a deny entry can match get a rule
	// per entry present now (denyexpand.go).
	globs := resolvedGlobs(s.Filesystem.Deny)
	types := expansionTypes{}
	expanded := expandReadRoots(s, globs, types)
	// A profile path the view makes a symlink (/bin → usr/bin) gets its
	// rule at the view's target instead: the same inode, and where the
	// target lies beneath another rule that grants as much (/usr), the
	// rule is dropped (landlock.Prune).
	viewRead := viewTargets(binds, expanded.landlockRead(s.Filesystem.Read), types)
	viewWrite := viewTargets(binds, s.Filesystem.Write, types)
	if landlockAsLists {
		viewRead, viewWrite = expanded.landlockRead(s.Filesystem.Read), s.Filesystem.Write
	}
	read := append([]string{ws, home, sandboxTmp, "/dev", "/proc"}, viewRead...)
	read = append(read, viewWrite...)
	var write []string
	if !s.ReadOnlyWorkspace {
		write = append(write, ws)
	}
	write = append(write, viewWrite...)
	write = append(write, home, sandboxTmp, "/dev/shm", "/dev/pts", "/dev/null", "/dev/zero", "/dev/full", "/dev/tty")
	exec := s.Filesystem.Exec
	if len(exec) == 0 {
		exec = append(append([]string{}, read...), write...)
	}

	env := buildEnv(s, home, os.Environ(), cmd.Env)
	rl := []linux.Rlimit{
		{Resource: unix.RLIMIT_CORE, Value: 0},
		{Resource: unix.RLIMIT_NOFILE, Value: nofileLimit()},
		// A runaway writer stops at 16GiB per file (SIGXFSZ), well past
		// any source tree or build artefact, or at the write budget.
		{Resource: unix.RLIMIT_FSIZE, Value: fileSizeLimit(s.Budgets.MaxWrite)},
	}
	ll := landlock.Ruleset{
		Read: read, Write: write, Exec: exec,
		// Every directory of the view may be listed (the view holds only
		// what the profile grants); files need Read.
		List:     []string{"/"},
		IoctlDev: []string{"/dev/pts", "/dev/tty", "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"},
		Types:    types,
	}
	// The rules in the order the helper applies them, each with its
	// rights merged from the lists and, for the deny expansion's entries,
	// its type.
	llConfig := linux.LandlockConfig{Rules: ll.Compile(), ScopeSignals: true, ScopeAbstractUnix: true}
	if landlockAsLists {
		llConfig = linux.LandlockConfig{Read: ll.Read, List: ll.List, Write: ll.Write, Exec: ll.Exec, IoctlDev: ll.IoctlDev, ScopeSignals: true, ScopeAbstractUnix: true}
	}
	var links *linkCheck
	if o.linksAtOpen {
		links = newLinkCheck(ws)
	}
	return &plan{home: home, protect: prot, linksMasked: overflow, links: links, deny: globs, denyWatch: planDenyWatch(s, globs, expanded), config: linux.Config{
		Argv:       append([]string(nil), cmd.Args...),
		Env:        env,
		Dir:        dir,
		Mounts:     mounts,
		Hostname:   sandboxHostname,
		Landlock:   llConfig,
		Rlimits:    rl,
		Seccomp:    true,
		ExecGuard:  strictExec,
		LoopbackUp: s.Network.Mode == profile.NetworkModeNone,
	}}, nil
}

// landlockAsLists sends the Landlock lists as the helper merged them
// before the supervisor planned its rules (no types, nothing dropped):
// for the test that compares the two domains, and nothing else.
var landlockAsLists bool

// viewTargets returns paths with each symlink binds makes in the view's
// root directory (/bin → usr/bin) replaced by the path it leads to. The
// kernel resolves the link from the root, a directory of the view's own
// with no symlink in its way, so the lexical path is the one it finds; a
// link elsewhere, or with ".." in it, is left as it is (the rule then
// follows it when it is applied). A target that is not itself a symlink
// on the host, beneath the bind of the same host path, gets its type in
// types, so that landlock.Prune may drop it.
func viewTargets(binds []linux.Mount, paths []string, types expansionTypes) []string {
	links := map[string]string{}
	for _, m := range binds {
		if m.Kind == linux.MountSymlink && filepath.Dir(m.Target) == "/" && !slices.Contains(strings.Split(m.Source, "/"), "..") {
			links[m.Target] = m.Source
		}
	}
	if len(links) == 0 {
		return paths
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = p
		dest, ok := links[p]
		if !ok {
			continue
		}
		out[i] = filepath.Join("/", dest)
		if boundAbove(binds, out[i]) {
			if fi, err := os.Lstat(out[i]); err == nil && fi.Mode()&fs.ModeSymlink == 0 {
				types[out[i]] = landlock.TypeFile
				if fi.IsDir() {
					types[out[i]] = landlock.TypeDir
				}
			}
		}
	}
	return out
}

// boundAbove reports whether a bind of binds shows the host's own path
// at a directory above p, so p in the view is the host's p.
func boundAbove(binds []linux.Mount, p string) bool {
	for _, m := range binds {
		if m.Kind == linux.MountBind && m.Source == m.Target && m.Target != p && profile.Within(m.Target, p) {
			return true
		}
	}
	return false
}

// pathMount binds a profile path; a symlink on the host (/bin → usr/bin
// on merged-/usr systems) becomes the same symlink in the sandbox.
func pathMount(path string, ro bool) linux.Mount {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if dest, err := os.Readlink(path); err == nil {
			return linux.Mount{Kind: linux.MountSymlink, Source: dest, Target: path}
		}
	}
	return linux.Mount{Kind: linux.MountBind, Source: path, Target: path, ReadOnly: ro, Optional: true}
}

func devMounts(scratch scratchBound) []linux.Mount {
	// /dev holds only mount points and symlinks; Landlock keeps the
	// command from writing it, and without Landlock it is 1 MiB and 1024
	// inodes.
	m := []linux.Mount{{Kind: linux.MountTmpfs, Target: "/dev", Mode: 0o755, Size: 1 << 20, Inodes: 1024}}
	for _, d := range devices {
		m = append(m, linux.Mount{Kind: linux.MountBind, Source: "/dev/" + d, Target: "/dev/" + d, Optional: true})
	}
	m = append(m,
		linux.Mount{Kind: linux.MountDevpts, Target: "/dev/pts"},
		linux.Mount{Kind: linux.MountSymlink, Source: "pts/ptmx", Target: "/dev/ptmx"},
		scratch.mount("shm", "/dev/shm", 0o1777),
		linux.Mount{Kind: linux.MountSymlink, Source: "/proc/self/fd", Target: "/dev/fd"},
		linux.Mount{Kind: linux.MountSymlink, Source: "/proc/self/fd/0", Target: "/dev/stdin"},
		linux.Mount{Kind: linux.MountSymlink, Source: "/proc/self/fd/1", Target: "/dev/stdout"},
		linux.Mount{Kind: linux.MountSymlink, Source: "/proc/self/fd/2", Target: "/dev/stderr"},
	)
	return m
}

// sandboxHome is the path of the empty private HOME: the caller's home
// path when it is a plain absolute path, else /home/sandbox.
func sandboxHome(s profile.Spec) string {
	h, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(h) || filepath.Clean(h) == "/" {
		return "/home/sandbox"
	}
	h = filepath.Clean(h)
	for _, r := range append(append([]string{}, s.Filesystem.Read...), s.Filesystem.Write...) {
		if profile.Within(r, h) {
			return "/home/sandbox"
		}
	}
	if profile.Within(h, s.Workspace) || !profile.Within(s.Workspace, h) {
		return h
	}
	return "/home/sandbox"
}

// buildEnv keeps the allowlisted variables of the caller, then the
// profile's forced ones, then the Cmd's, then HOME, TMPDIR and PATH.
func buildEnv(s profile.Spec, home string, caller, extra []string) []string {
	vals := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, ok := vals[k]; !ok {
			order = append(order, k)
		}
		vals[k] = v
	}
	for _, kv := range caller {
		k, v, ok := strings.Cut(kv, "=")
		if ok && envAllowed(s.Env.Allow, k) {
			set(k, v)
		}
	}
	keys := make([]string, 0, len(s.Env.Set))
	for k := range s.Env.Set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		set(k, s.Env.Set[k])
	}
	for _, kv := range extra {
		if k, v, ok := strings.Cut(kv, "="); ok {
			set(k, v)
		}
	}
	set("HOME", home)
	set("TMPDIR", sandboxTmp)
	if _, ok := vals["PATH"]; !ok || !hasSetPath(s, extra) {
		set("PATH", visiblePath(s, os.Getenv("PATH")))
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+vals[k])
	}
	return out
}

func hasSetPath(s profile.Spec, extra []string) bool {
	if _, ok := s.Env.Set["PATH"]; ok {
		return true
	}
	for _, kv := range extra {
		if strings.HasPrefix(kv, "PATH=") {
			return true
		}
	}
	return false
}

func envAllowed(allow []string, k string) bool {
	for _, a := range allow {
		if a == k || (strings.HasSuffix(a, "*") && strings.HasPrefix(k, strings.TrimSuffix(a, "*"))) {
			return true
		}
	}
	return false
}

// visiblePath keeps the caller's PATH entries that exist in the sandbox
// (so /usr/local/go/bin stays), or the default PATH.
func visiblePath(s profile.Spec, callerPath string) string {
	var keep []string
	for _, d := range filepath.SplitList(callerPath) {
		if !filepath.IsAbs(d) {
			continue
		}
		for _, r := range append(append([]string{s.Workspace}, s.Filesystem.Read...), s.Filesystem.Write...) {
			if profile.Within(r, d) {
				keep = append(keep, d)
				break
			}
		}
	}
	if len(keep) == 0 {
		return defaultPath
	}
	return strings.Join(keep, ":")
}

func nofileLimit() uint64 {
	var r unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &r) == nil && r.Max < 65536 {
		return r.Max
	}
	return 65536
}

func fileSizeLimit(maxWrite profile.Size) uint64 {
	if maxWrite > 0 && maxWrite < 16<<30 {
		return uint64(maxWrite)
	}
	return 16 << 30
}

func depth(p string) int { return strings.Count(filepath.Clean(p), "/") }
