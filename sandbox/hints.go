package sandbox

import (
	"bytes"
	"io"
	"strings"
	"sync"

	"github.com/airlockhq/airlock/profile"
)

// Some refusals reach no part of airlock: with --net none a name lookup
// fails inside the command's resolver, and a write to a read-only mount
// (a protected path, a system path) fails with EROFS in the kernel, with
// no event an unprivileged supervisor can read. outputHints watches the
// command's stderr for the messages programs print for these (glibc,
// curl, git, ssh, Go, Node, pip; "Read-only file system"; and, where the
// sandbox cannot see reads of masked paths itself, "Permission denied")
// and says once per kind, on airlock's own line, why; the Report gets a denial marked as
// seen in the command's output. A command can print such a message
// without the refusal: the lines and denials are hints, never a claim that
// something was allowed.
type outputHints struct {
	w        io.Writer
	mu       sync.Mutex
	tail     []byte // the end of the last write, for a message split across two
	seen     bool   // a failed lookup (only watched for with --net none)
	dnsOff   bool   // the network is not off: lookups are the gateway's to report
	seenROFS bool
	// silentEACCES: on this host the sandbox cannot report reads of
	// masked paths itself (Report.Silent), so an EACCES message stands
	// in for them.
	silentEACCES bool
	seenEACCES   bool
	// seenGitConfig: git could not write the protected .git/config;
	// seenUnreach: a connect failed with the network off.
	seenGitConfig, seenUnreach bool
	pending                    []string // lines to say once the command's current line ends
	// crlf ends the lines with \r\n: they go to a terminal in raw mode
	// (Cmd.Terminal).
	crlf bool
}

// newHints watches what w receives for this run.
func (p *Process) newHints(w io.Writer) *outputHints {
	return &outputHints{w: w, dnsOff: p.e.profile.Spec().Network.Mode != profile.NetworkModeNone, silentEACCES: !p.e.report.Host.FanotifyPerm}
}

// resolverFailures are the messages of failed name lookups.
var resolverFailures = [][]byte{
	[]byte("Temporary failure in name resolution"),
	[]byte("Could not resolve host"),
	[]byte("Could not resolve hostname"),
	[]byte("Name or service not known"),
	[]byte("No address associated with hostname"),
	[]byte("getaddrinfo EAI_AGAIN"),
	[]byte("getaddrinfo ENOTFOUND"),
	[]byte(": no such host"),
	[]byte("nodename nor servname provided"),
}

// readOnlyFailure is strerror(EROFS).
var readOnlyFailure = []byte("Read-only file system")

// accessFailure is strerror(EACCES).
var accessFailure = []byte("Permission denied")

const accessHintLine = "airlock: 'Permission denied' may be a read of a path the sandbox masks (deny entries, /proc's kernel files), which this host lets airlock refuse but not see; --report lists what goes unseen (silent_refusals)\n"

const readOnlyHintLine = "airlock: a write was refused: read-only in this sandbox are protected paths in the workspace (.git/hooks, .git/config, .airlock, ...) and everything outside it except /tmp, HOME and --allow-write paths\n"

// gitConfigFailures are git's words when .git/config, protected in the
// sandbox, cannot be written: a mount point (EBUSY for the rename over
// it) or read-only.
var gitConfigFailures = [][]byte{
	[]byte("could not write config file .git/config"),
	[]byte("could not lock config file .git/config"),
}

// unreachableFailures are strerror(ENETUNREACH) as Go and libc spell it:
// with --net none the sandbox has only lo, and Go's resolver fails so.
var unreachableFailures = [][]byte{
	[]byte("network is unreachable"),
	[]byte("Network is unreachable"),
}

const gitConfigHintLine = "airlock: .git/config is read-only in the sandbox (agent persistence); run git config on the host\n"

const unreachableHintLine = "airlock: a connection failed: the network is off in this sandbox (--net none); allow the hosts the command needs with --net HOST,...\n"

const outputHintsLine = "airlock: a name lookup failed: the network is off in this sandbox (--net none); allow the hosts the command needs with --net HOST,...\n"

func (h *outputHints) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	// Line by line, so a hint goes right after the end of the command's
	// line that called for it and the two read together (a program may
	// write its message and the newline separately, and one read may hold
	// several lines).
	n := 0
	for len(p) > 0 {
		seg := p
		if i := bytes.IndexByte(p, '\n'); i >= 0 {
			seg = p[:i+1]
		}
		p = p[len(seg):]
		m, err := h.w.Write(seg)
		n += m
		if err != nil {
			return n, err
		}
		h.scanLocked(seg)
		if len(h.pending) > 0 && bytes.HasSuffix(seg, []byte("\n")) {
			h.flushLocked()
		}
	}
	return n, nil
}

// scanLocked looks for the messages in what the command wrote, with the
// end of its previous write for a message split across two.
func (h *outputHints) scanLocked(seg []byte) {
	if (h.seen || h.dnsOff) && (h.seenUnreach || h.dnsOff) && h.seenROFS && h.seenGitConfig && (h.seenEACCES || !h.silentEACCES) {
		return
	}
	buf := append(h.tail, seg...)
	if !h.seen && !h.dnsOff {
		for _, m := range resolverFailures {
			if bytes.Contains(buf, m) {
				h.seen = true
				h.pending = append(h.pending, outputHintsLine)
				break
			}
		}
	}
	if !h.seenUnreach && !h.dnsOff && !h.seen && containsAny(buf, unreachableFailures) {
		h.seenUnreach = true
		h.pending = append(h.pending, unreachableHintLine)
	}
	if !h.seenGitConfig && containsAny(buf, gitConfigFailures) {
		h.seenGitConfig = true
		h.pending = append(h.pending, gitConfigHintLine)
	}
	if !h.seenROFS && bytes.Contains(buf, readOnlyFailure) {
		h.seenROFS = true
		h.pending = append(h.pending, readOnlyHintLine)
	}
	if h.silentEACCES && !h.seenEACCES && bytes.Contains(buf, accessFailure) {
		h.seenEACCES = true
		h.pending = append(h.pending, accessHintLine)
	}
	if len(buf) > 64 {
		buf = buf[len(buf)-64:]
	}
	h.tail = append(h.tail[:0], buf...)
}

func (h *outputHints) flushLocked() {
	for _, line := range h.pending {
		if h.crlf {
			line = strings.TrimSuffix(line, "\n") + "\r\n"
		}
		_, _ = h.w.Write([]byte(line))
	}
	h.pending = nil
}

// denials are the Report's records of the hints given (Live: their line
// was said); a hint still waiting for the end of the command's line is
// said now.
func (h *outputHints) denials() []Denial {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.pending) > 0 {
		_, _ = h.w.Write([]byte("\n"))
		h.flushLocked()
	}
	var out []Denial
	if h.seen {
		out = append(out, Denial{Kind: "network", Protocol: "dns", Target: "(a name, seen in the command's stderr)",
			Reason: "name lookup with the network off (--net none)", Live: true})
	}
	if h.seenUnreach {
		out = append(out, Denial{Kind: "network", Target: "(an address, seen in the command's stderr)",
			Reason: "connection with the network off (--net none): network is unreachable", Live: true})
	}
	if h.seenGitConfig {
		out = append(out, Denial{Kind: "filesystem", Target: ".git/config",
			Reason: "write to .git/config, read-only in the sandbox (agent persistence), seen in the command's stderr; run git config on the host", Live: true})
	}
	if h.seenROFS {
		out = append(out, Denial{Kind: "filesystem", Target: "(a path, seen in the command's stderr)",
			Reason: "write to a path that is read-only in the sandbox (Read-only file system)", Live: true})
	}
	if h.seenEACCES {
		out = append(out, Denial{Kind: "filesystem", Target: "(a path, seen in the command's stderr)",
			Reason: "read refused (Permission denied), perhaps of a masked path, on a host where the sandbox cannot see masked reads", Live: true})
	}
	return out
}

func containsAny(b []byte, ms [][]byte) bool {
	for _, m := range ms {
		if bytes.Contains(b, m) {
			return true
		}
	}
	return false
}
