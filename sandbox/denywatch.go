package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox/internal/guard"
	"github.com/airlockhq/airlock/sandbox/internal/linux"
)

// The deny watch: deny paths and globs also refuse files that appear after
// the start. Masks (mask.go) hide what a deny entry matches when the run
// is prepared; a mount cannot hide a name that does not exist yet, and
// Landlock cannot subtract a path from a readable tree. So, when the
// supervisor may (CAP_SYS_ADMIN in the initial user namespace), it puts
// the sandbox's own mounts under a deny entry into a fanotify group with
// FAN_OPEN_PERM: every open through them (read, write, create, exec, and
// opening a directory to list it) waits until the supervisor has matched
// the opened file's path against the deny entries and answered.
//
//	helper, after the mount view   O_PATH descriptor of every directory mount at or beneath
//	(internal/linux/denymounts.go) a watch root → SCM_RIGHTS over its own socket → wait for a byte
//	supervisor (startDenyWatch)    fanotify_init(FAN_CLASS_CONTENT) → fanotify_mark(FAN_MARK_MOUNT,
//	                               FAN_OPEN_PERM|FAN_ONDIR) on each → serve → write the byte
//	each open in the sandbox       event → readlink of the event's descriptor (the path in the
//	                               sandbox's view, which mirrors the host's) → FAN_DENY (EPERM) if a
//	                               deny entry matches it or a parent, else FAN_ALLOW → a Denial
//	Process.Wait / failed Start    every process of the run is dead → stop reading, collect the
//	                               denials → close the group in the background
//
// The marks are on mounts that exist only in the sandbox's mount
// namespace: host processes opening the same files are never asked, and
// the command cannot make an unmarked copy of them (it can create no
// mount namespace: no capabilities, and seccomp). Exec opens raise
// FAN_OPEN_PERM too, so FAN_OPEN_EXEC_PERM adds nothing; FAN_ACCESS_PERM
// would cost a round trip per read() to add only descriptors opened
// before their file got a denied name.
//
// Every event is answered: read errors are events the kernel has already
// denied, and closing the group (at the end of the run, or when the
// supervisor dies) makes the kernel allow whatever is pending. A
// supervisor that dies takes the run with it (the helper's PDEATHSIG), but
// between its descriptors closing and that SIGKILL landing the kernel
// allows opens: deny entries hold only while a supervisor answers.
//
// What a path check cannot see: in a directory the command may write, it
// can rename or hard-link a file that appeared at a denied name to another
// name (neither opens the file) and open it there; and content a host
// program writes under another name first (an editor's temporary file,
// renamed to .env when saved) is readable until the rename. The Report
// says so: deny-new-files is enforced only when every watched mount is
// read-only in the sandbox.

// expandMechanism is the Report's name for read-only roots held to their
// entries at the start.
const expandMechanism = "Landlock read rules only for the entries read-only paths held at the start"

// denyWatchMechanism is the Report's name for the deny watch.
const denyWatchMechanism = "fanotify open permission on the sandbox's own mounts, answered by the supervisor"

// maxDenyDenials caps the distinct paths one run records; the Result says
// how many more there were.
const maxDenyDenials = 1000

// denyWatchPlan is what a profile's deny watch covers.
type denyWatchPlan struct {
	roots []watchRoot
	// globs are the deny entries that can match beneath a root, with a
	// second form for those whose fixed part leads through a symlink on
	// the host (the view shows the resolved path, as the masks do).
	globs []denyGlob
}

// watchRoot is one path the sandbox binds from the host under which a
// deny entry can match.
type watchRoot struct {
	path     string
	writable bool
}

// planDenyWatch returns the deny watch of a profile, or nil when no deny
// entry can match inside a path the sandbox binds, other than the
// read-only roots Landlock holds to their entries at the start
// (expanded, denyexpand.go): such runs pay nothing.
func planDenyWatch(s profile.Spec, globs []denyGlob, expanded readExpansion) *denyWatchPlan {
	if len(globs) == 0 {
		return nil
	}
	binds := []watchRoot{{s.Workspace, !s.ReadOnlyWorkspace}}
	for _, r := range s.Filesystem.Read {
		if _, ok := expanded[r]; !ok {
			binds = append(binds, watchRoot{r, false})
		}
	}
	for _, w := range s.Filesystem.Write {
		binds = append(binds, watchRoot{w, true})
	}
	var pl denyWatchPlan
	used := make([]bool, len(globs))
	for _, b := range binds {
		parts := splitGlobPath(b.path)
		var matching []int
		for i, g := range globs {
			if g.canMatchBeneath(b.path, parts) {
				matching = append(matching, i)
			}
		}
		// A path that is a symlink on the host is a symlink in the view
		// too (pathMount); its target is bound, and watched, on its own.
		if len(matching) == 0 || pathMount(b.path, !b.writable).Kind != linux.MountBind {
			continue
		}
		pl.roots = append(pl.roots, b)
		for _, i := range matching {
			if !used[i] {
				used[i] = true
				pl.globs = append(pl.globs, globs[i])
			}
		}
	}
	if len(pl.roots) == 0 {
		return nil
	}
	return &pl
}

// writable reports whether the command can write in a watched mount, and
// so rename a file out of a denied name there.
func (pl *denyWatchPlan) writable() bool {
	for _, r := range pl.roots {
		if r.writable {
			return true
		}
	}
	return false
}

func (pl *denyWatchPlan) rootPaths() []string {
	out := make([]string, len(pl.roots))
	for i, r := range pl.roots {
		out[i] = r.path
	}
	return out
}

// denyGlob is one absolute deny glob, split once.
type denyGlob struct {
	pattern string
	root    string // the longest leading part without wildcards
	parts   []string
	// orBeneath is pattern + "/**": it matches what pattern matches and
	// everything beneath.
	orBeneath string
}

func newDenyGlob(pattern string) denyGlob {
	return denyGlob{pattern: pattern, root: globRoot(pattern), parts: splitGlobPath(pattern), orBeneath: strings.TrimSuffix(pattern, "/") + "/**"}
}

// resolvedGlobs compiles the deny globs, adding for each whose fixed
// leading part resolves through a symlink on the host the glob with that
// part resolved.
func resolvedGlobs(deny []string) []denyGlob {
	out := make([]denyGlob, 0, len(deny))
	for _, p := range deny {
		out = append(out, newDenyGlob(p))
	}
	for _, g := range out[:len(deny)] {
		real, err := filepath.EvalSymlinks(g.root)
		if err != nil || real == g.root {
			continue
		}
		out = append(out, newDenyGlob(filepath.Join(real, strings.TrimPrefix(g.pattern, g.root))))
	}
	return out
}

// hides reports whether the glob matches path or one of its parents: the
// rule of the masks, and of profile.Profile.Denied.
func (g denyGlob) hides(path string) bool {
	// Every path the glob matches starts with its fixed part.
	return profile.Within(g.root, path) && profile.MatchGlob(g.orBeneath, path)
}

// canMatchBeneath reports whether the glob matches dir (split into
// parts), a parent of dir, or some path beneath dir.
func (g denyGlob) canMatchBeneath(dir string, parts []string) bool {
	return g.hides(dir) || prefixCanMatch(g.parts, parts)
}

// prefixCanMatch reports whether the path elements parts can be the start
// of a path that pat matches, with at least one element more.
func prefixCanMatch(pat, parts []string) bool {
	if len(parts) == 0 {
		return len(pat) > 0
	}
	if len(pat) == 0 {
		return false
	}
	if pat[0] == "**" {
		return prefixCanMatch(pat[1:], parts) || prefixCanMatch(pat, parts[1:])
	}
	if ok, err := filepath.Match(pat[0], parts[0]); err != nil || !ok {
		return false
	}
	return prefixCanMatch(pat[1:], parts[1:])
}

func splitGlobPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// denyNewFilesStatus is the Report's line for deny-new-files.
func denyNewFilesStatus(s profile.Spec, h HostInfo) GuaranteeStatus {
	st := GuaranteeStatus{Guarantee: profile.DenyNewFiles}
	// The Report cannot foresee a root over the expansion's bound, which
	// a run would watch instead: it counts every expandable root.
	globs := resolvedGlobs(s.Filesystem.Deny)
	expanded := readExpansion{}
	for _, r := range expandableRoots(s, globs) {
		expanded[r] = nil
	}
	pl := planDenyWatch(s, globs, expanded)
	switch {
	case pl == nil && len(expanded) == 0:
		st.Status, st.Reason = NotApplied, "no deny entry can match inside a path the sandbox sees"
	case pl == nil && h.LandlockABI == 0:
		st.Status, st.Mechanism = Degraded, "mounts over what deny entries match when the run starts"
		st.Reason = "deny entries cover only files present at start: Landlock is unavailable"
	case pl == nil:
		st.Status, st.Mechanism = Enforced, expandMechanism
	case !h.UserNamespaces:
		st.Status, st.Reason = Unavailable, "user namespaces unavailable: "+h.UserNSReason
	case !h.FanotifyPerm:
		st.Status, st.Mechanism = Degraded, "mounts over what deny entries match when the run starts"
		st.Reason = "deny entries cover only files present at start: " + h.FanotifyReason
	case pl.writable():
		st.Status, st.Mechanism = Degraded, denyWatchMechanism
		st.Reason = "a file that appears later at a denied path cannot be opened there, but in a writable directory the command can rename or hard-link it to another name first"
	default:
		st.Status, st.Mechanism = Enforced, denyWatchMechanism
	}
	return st
}

// wantsDenyWatch reports whether a run has a deny watch: a deny entry can
// match inside its mounts, or it has masks, and this supervisor can
// answer permission events (else the Report says so).
func (p *Process) wantsDenyWatch() bool {
	return (p.plan.denyWatch != nil || p.plan.links != nil || len(maskTargets(p.plan.config.Mounts)) > 0) && p.e.host.FanotifyPerm
}

// denyWatchConfig tells the helper which descriptor (its fd) the hand-off
// socket is, which roots to hand over (none without a deny watch plan)
// and where the masks are.
func denyWatchConfig(fd int, pl *denyWatchPlan, links *linkCheck, mounts []linux.Mount) *linux.DenyWatchConfig {
	c := &linux.DenyWatchConfig{Masks: maskTargets(mounts), FD: fd}
	if pl != nil {
		c.Roots = pl.rootPaths()
	}
	if links != nil {
		c.Links = []string{links.workspace}
	}
	return c
}

// errDenyHelperGone: the helper ended before handing over its mounts; its
// own message on the error pipe says why.
var errDenyHelperGone error = guard.HelperGone("the mounts")

// startDenyWatch receives the helper's mounts, marks them, serves the
// group and tells the helper to go on. It closes the supervisor's end of
// the hand-off either way, so a helper still waiting fails its step.
func (p *Process) startDenyWatch(h *guard.Handoff) error {
	defer h.Parent.Close()
	masks, mounts, links, err := receiveMounts(h.Parent)
	defer func() {
		for _, fd := range append(append(masks, mounts...), links...) {
			unix.Close(fd)
		}
	}()
	if err != nil {
		return err
	}
	// An unlimited queue: on overflow the kernel would drop permission
	// events, which means allowing them.
	// FAN_REPORT_TID: the hard-link check reads the opening thread's
	// registers (linkwatch.go).
	fan, err := unix.FanotifyInit(unix.FAN_CLASS_CONTENT|unix.FAN_CLOEXEC|unix.FAN_NONBLOCK|unix.FAN_UNLIMITED_QUEUE|unix.FAN_REPORT_TID,
		// O_NONBLOCK: the event's descriptor must not wait for a FIFO's
		// writer (the writer is the opener waiting for the answer).
		unix.O_RDONLY|unix.O_NONBLOCK|unix.O_LARGEFILE|unix.O_CLOEXEC)
	if err != nil {
		return fmt.Errorf("fanotify_init: %w", err)
	}
	if err := markMounts(fan, mounts, unix.FAN_OPEN_PERM|unix.FAN_ONDIR); err != nil {
		unix.Close(fan)
		return err
	}
	// The hard-link check's own mounts: only files are judged, so
	// listing a directory there needs no answer.
	if err := markMounts(fan, links, unix.FAN_OPEN_PERM); err != nil {
		unix.Close(fan)
		return err
	}
	maskInodes, err := markMasks(fan, masks)
	if err != nil {
		unix.Close(fan)
		return err
	}
	w := &denyWatch{
		fan:   os.NewFile(uintptr(fan), "fanotify"),
		fanFD: fan,
		masks: maskInodes,
		deny:  p.plan.deny,
		done:  make(chan struct{}),
		seen:  map[string]bool{},
		note:  p.noteRefusal,
		links: p.plan.links,
	}
	if p.plan.denyWatch != nil {
		w.globs = p.plan.denyWatch.globs
	}
	go w.serve()
	p.deny.Store(w)
	if _, err := h.Parent.Write([]byte{1}); err != nil {
		return fmt.Errorf("tell the helper its mounts are watched: %w", err)
	}
	return nil
}

// markMounts puts a mount mark for mask on each descriptor: "." on a
// directory's O_PATH descriptor (fanotify_mark without a path refuses
// O_PATH descriptors), none on a file mount's, which is an open file.
func markMounts(fan int, fds []int, mask uint64) error {
	for _, m := range fds {
		path := "."
		if fl, err := unix.FcntlInt(uintptr(m), unix.F_GETFL, 0); err == nil && fl&unix.O_PATH == 0 {
			path = ""
		}
		if err := unix.FanotifyMark(fan, unix.FAN_MARK_ADD|unix.FAN_MARK_MOUNT, mask, m, path); err != nil {
			return fmt.Errorf("fanotify_mark: %w", err)
		}
	}
	return nil
}

// receiveMounts reads the helper's messages until the last one (its byte
// is 0) and returns the descriptors they carried: the mask inodes (the
// message tagged linux.MaskTag), the mounts, and the mounts only the
// hard-link check watches (linux.LinkTag).
func receiveMounts(sock *os.File) (masks, mounts, links []int, err error) {
	for {
		tag, got, closed, err := guard.RecvRights(sock, linux.MountsPerMessage)
		switch tag {
		case linux.MaskTag:
			masks = append(masks, got...)
		case linux.LinkTag:
			links = append(links, got...)
		default:
			mounts = append(mounts, got...)
		}
		switch {
		case err != nil:
			return masks, mounts, links, fmt.Errorf("receive the sandbox's mounts: %w", err)
		case closed:
			return masks, mounts, links, errDenyHelperGone
		case tag == 0:
			return masks, mounts, links, nil
		}
	}
}

// closeDenyWatch stops the run's deny watch, once every process of the
// run is gone, and returns its denials. Safe to call more than once.
func (p *Process) closeDenyWatch() []Denial {
	w := p.deny.Swap(nil)
	if w == nil {
		return nil
	}
	return w.close()
}

// denyWatch answers the permission events of one run.
type denyWatch struct {
	fan   *os.File // non-blocking, so Close ends a pending Read
	globs []denyGlob
	// masks are the mask inodes (maskwatch.go); deny is every deny
	// glob, to say which one a masked path matches.
	masks map[fileID]bool
	deny  []denyGlob
	// links is the run's hard-link check, when the supervisor makes it
	// (linkwatch.go).
	links *linkCheck
	done  chan struct{}
	// note says a new denial on the run's stderr as it happens.
	note func(Denial)

	// fanFD is fan's descriptor, for marks (Fd would make fan
	// blocking, and Close could no longer end a pending Read).
	fanFD int
	// settled counts the inodes given an ignore mark (linkwatch.go);
	// only serve touches it.
	settled int

	mu      sync.Mutex
	denials []Denial
	seen    map[string]bool
	dropped int
}

func (w *denyWatch) serve() {
	defer close(w.done)
	const metaLen = int(unsafe.Sizeof(unix.FanotifyEventMetadata{}))
	buf := make([]byte, 16<<10)
	for {
		n, err := w.fan.Read(buf)
		if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, os.ErrClosed) {
			return
		}
		if err != nil {
			// The kernel could not give the event a descriptor (the
			// supervisor's descriptor limit, a device that refuses a
			// second open) and has denied it already.
			w.record("?", "open refused: the supervisor could not inspect it ("+err.Error()+")")
			continue
		}
		for off := 0; off+metaLen <= n; {
			m := (*unix.FanotifyEventMetadata)(unsafe.Pointer(&buf[off]))
			if m.Event_len < uint32(metaLen) || off+int(m.Event_len) > n {
				break
			}
			if m.Fd >= 0 {
				w.answer(int(m.Fd), int(m.Pid))
			}
			off += int(m.Event_len)
		}
	}
}

// answer decides one open by thread tid by the path of the file being
// opened, as the sandbox's view names it, and by its inode (the hard-link
// check), and closes the event's descriptor.
func (w *denyWatch) answer(fd, tid int) {
	var buf [unix.PathMax]byte
	path, reason := "?", "open refused: its path could not be read"
	n, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf[:])
	switch {
	case err != nil || n >= len(buf):
	case w.isMask(fd):
		// The mask's mount point is the masked path; the mask inode
		// itself was unlinked once bound.
		path = strings.TrimSuffix(string(buf[:n]), " (deleted)")
		reason = maskReason(w.deny, path)
	default:
		path, reason = string(buf[:n]), ""
		if g := w.deniedBy(path); g != "" {
			reason = "open refused: matches deny " + g + " (not there when the run started)"
		} else {
			var settled bool
			reason, settled = w.links.refusal(fd, tid, path)
			if settled && len(w.globs) == 0 && w.settled < maxSettled {
				// The mark is on the inode, in this group only: host
				// opens of it never reach the group (it has no mark on
				// their mounts). A failed mark costs only round trips.
				if unix.FanotifyMark(w.fanFD, unix.FAN_MARK_ADD|unix.FAN_MARK_IGNORED_MASK|unix.FAN_MARK_IGNORED_SURV_MODIFY, unix.FAN_OPEN_PERM, fd, "") == nil {
					w.settled++
				}
			}
		}
	}
	// Closed before the answer: the kernel finds the event by the
	// number, and the opener must not find this descriptor still open
	// (a FIFO's writer would take it for a reader).
	unix.Close(fd)
	resp := unix.FanotifyResponse{Fd: int32(fd), Response: unix.FAN_ALLOW}
	if reason != "" {
		resp.Response = unix.FAN_DENY
	}
	_, _ = w.fan.Write((*[unsafe.Sizeof(resp)]byte)(unsafe.Pointer(&resp))[:])
	if reason != "" {
		w.record(path, reason)
	}
}

// deniedBy returns the deny glob that hides path, or "". A file unlinked
// since it was opened shows as "PATH (deleted)"; either form counts.
func (w *denyWatch) deniedBy(path string) string {
	if g := hidingGlob(w.globs, path); g != "" {
		return g
	}
	if trimmed, deleted := strings.CutSuffix(path, " (deleted)"); deleted {
		return hidingGlob(w.globs, trimmed)
	}
	return ""
}

func (w *denyWatch) record(path, reason string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.seen[path]:
	case len(w.denials) >= maxDenyDenials:
		w.dropped++
	default:
		w.seen[path] = true
		d := Denial{Kind: "filesystem", Target: path, Reason: reason, Live: w.note != nil}
		w.denials = append(w.denials, d)
		if w.note != nil {
			w.note(d)
		}
	}
}

// close stops serving and closes the group: the kernel allows whatever
// is still pending, which, once every process of the run is gone, is
// nothing. The close itself waits for the kernel to drop the marks (an
// SRCU grace period, about 15 ms on the development VM), which the
// caller need not wait for.
func (w *denyWatch) close() []Denial {
	if err := w.fan.SetReadDeadline(time.Now()); err != nil {
		w.fan.Close()
	}
	<-w.done
	go w.fan.Close()
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.denials
	if w.dropped > 0 {
		out = append(out, Denial{Kind: "filesystem", Target: "*", Reason: fmt.Sprintf("%d more distinct opens refused, not listed", w.dropped)})
	}
	return out
}
