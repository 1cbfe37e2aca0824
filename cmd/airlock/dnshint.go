package main

import (
	"bytes"
	"io"
	"sync"

	"github.com/airlockhq/airlock/sandbox"
)

// With --net none the sandbox has only loopback, so a name lookup fails
// inside the command's resolver and nothing reaches airlock to refuse: no
// kernel event says "this was the sandbox". dnsHint watches the command's
// stderr for the messages resolvers print (glibc, curl, git, ssh, Go,
// Node, pip) and says once, on airlock's own line, why; the Report gets a
// "network" denial marked as seen in the command's output. A command can
// print such a message without a lookup: the line and the denial are a
// hint, never a claim that something was allowed.
type dnsHint struct {
	w    io.Writer
	mu   sync.Mutex
	tail []byte // the end of the last write, for a message split across two
	seen bool
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

const dnsHintLine = "airlock: a name lookup failed: the network is off in this sandbox (--net none); allow the hosts the command needs with --net HOST,...\n"

func (h *dnsHint) Write(p []byte) (int, error) {
	n, err := h.w.Write(p)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seen {
		return n, err
	}
	buf := append(h.tail, p...)
	for _, m := range resolverFailures {
		if bytes.Contains(buf, m) {
			h.seen = true
			// After the command's own line, so the two read together.
			if !bytes.HasSuffix(buf, []byte("\n")) {
				_, _ = h.w.Write([]byte("\n"))
			}
			_, _ = h.w.Write([]byte(dnsHintLine))
			break
		}
	}
	if len(buf) > 64 {
		buf = buf[len(buf)-64:]
	}
	h.tail = append(h.tail[:0], buf...)
	return n, err
}

// denial is the Report's record of the hint, if it was given.
func (h *dnsHint) denial() (sandbox.Denial, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return sandbox.Denial{Kind: "network", Protocol: "dns", Target: "(a name, seen in the command's stderr)",
		Reason: "name lookup with the network off (--net none)"}, h.seen
}
