package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/client"

	"github.com/airlockhq/airlock/provider"
)

func scopeHash(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:12])
}

// Execute runs req in a fresh container, or in its scope's container.
func (p *Provider) Execute(ctx context.Context, req provider.Request) (provider.Result, error) {
	began := time.Now()
	meta := map[string]string{"provider": "docker", "scope": p.cfg.Scope}
	ended := func() (provider.Result, error) {
		return provider.Result{Status: provider.Ended(ctx), ExitCode: -1, Metadata: meta,
			Timings: provider.Timings{Start: time.Since(began)}}, nil
	}
	netNone := req.Network == provider.NetworkNone && p.cfg.Network.Mode != provider.NetworkNone
	key := provider.ScopeKey(p.cfg.Scope, req.Identity)
	if key != "" && netNone {
		return provider.Result{}, &provider.Error{Class: provider.ErrInvalidRequest, Sandbox: p.cfg.Name,
			Msg: "a scoped docker sandbox keeps its container's network; narrow it in the catalog instead"}
	}
	if direct(key, req) {
		return p.runDirect(ctx, req, netNone, meta, began)
	}
	var c *ctr
	var lease *provider.Lease[*ctr]
	var err error
	if key != "" {
		if lease, err = p.scopes.Acquire(ctx, key); err != nil {
			if ctx.Err() != nil {
				return ended()
			}
			return provider.Result{}, err
		}
		c = lease.Value()
		if lease.Reused {
			meta["scope_reused"] = "true"
		}
	} else {
		if c, err = p.create(ctx, "", req.ExecutionID, netNone); err != nil {
			if ctx.Err() != nil {
				return ended()
			}
			return provider.Result{}, err
		}
	}
	meta["container"] = c.id[:12]
	var before procSet
	if lease != nil {
		before = cgroupProcs(c.id)
	}
	// The container's own clock for this call: it ends the container
	// when airlock cannot (killed, frozen) end the call itself.
	deadline, _ := ctx.Deadline()
	var res provider.Result
	poison := true
	if err = c.callStarts(deadline); err != nil {
		err = &provider.Error{Class: provider.ErrProvider, Sandbox: p.cfg.Name, Op: "keeper",
			Msg: "the container's keeper is gone (the container ended); retry"}
	} else {
		res, poison, err = p.run(ctx, c, req, meta, began)
	}
	if lease != nil {
		// Every call in a kept container ends by killing every process
		// it left, detached ones included. When the host's view of the
		// cgroup shows that none is left, the sweep exec is not needed.
		if !poison && err == nil && !leftNothing(before, cgroupProcs(c.id)) {
			meta["swept"] = "true"
			poison = !p.sweep(c)
		}
		if !poison && err == nil && c.callEnded() != nil {
			poison = true
		}
		if rerr := lease.Release(poison || err != nil); rerr != nil && err == nil {
			err = rerr
		}
	} else if rerr := p.remove(c); rerr != nil && err == nil {
		err = rerr
	}
	if poison {
		meta["poisoned"] = "true"
	}
	return res, err
}

func (p *Provider) run(ctx context.Context, c *ctr, req provider.Request, meta map[string]string, began time.Time) (provider.Result, bool, error) {
	res := provider.Result{ExitCode: -1, Metadata: meta}
	if len(req.Files) > 0 {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, name := range sortedNames(req.Files) {
			data := req.Files[name]
			_ = tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg, ModTime: time.Now()})
			_, _ = tw.Write(data)
		}
		_ = tw.Close()
		// Inside the container a link can only reach the container's
		// own files, but what a call left under an input's name is
		// refused as it is by every provider: a link, a FIFO, a
		// directory or a device is never replaced or written through.
		names := sortedNames(req.Files)
		x, err := p.exec(ctx, c, append([]string{"sh", "-c", `bad=
for f; do
  k=
  if [ -L "$f" ]; then k="a symbolic link"
  elif [ -d "$f" ]; then k="a directory"
  elif [ -p "$f" ]; then k="a FIFO"
  elif [ -e "$f" ] && [ ! -f "$f" ]; then k="not a regular file"
  fi
  echo "$k"; [ -n "$k" ] && bad=1
done
[ -z "$bad" ] || exit 3
exec tar -x -f - -C /tmp`, "sh"}, names...), buf.Bytes(), 64<<10)
		if err != nil || x.ended {
			return p.endedOr(ctx, res, began, err)
		}
		if x.exit == 3 {
			res.Status, res.FileErrors = provider.StatusFailed, map[string]string{}
			for i, k := range strings.Split(strings.TrimSuffix(string(x.stdout), "\n"), "\n") {
				if k != "" && i < len(names) {
					res.FileErrors[names[i]] = names[i] + " in the working directory is " + k +
						" (an earlier call of this scope left it); airlock writes only regular files: remove it or use another name"
				}
			}
			meta["ended"] = "input files"
			res.Timings.Start = time.Since(began)
			return res, false, nil
		}
		if x.exit != 0 {
			return res, true, &provider.Error{Class: provider.ErrProvider, Sandbox: p.cfg.Name, Op: "input files",
				Msg: "writing the input files failed (the image needs tar, and /tmp must hold them: raise scratch)"}
		}
	}
	argv := commandLine(req)
	res.Timings.Start = time.Since(began)
	oomBefore, pidsBefore := oomKills(c.id), pidsRefused(c.id)
	ran := time.Now()
	x, err := p.exec(ctx, c, argv, req.Stdin, p.cfg.MaxOutput)
	res.Timings.Run = time.Since(ran)
	if err != nil {
		return p.endedOr(ctx, res, began, err)
	}
	res.Stdout, res.Stderr = string(x.stdout), string(x.stderr)
	switch {
	case x.ended:
		res.Status = provider.Ended(ctx)
		return res, true, nil
	case x.overflow:
		res.Status = provider.StatusOutputLimitExceeded
		return res, true, nil
	}
	res.ExitCode = x.exit
	res.Status = provider.StatusSucceeded
	if x.exit != 0 {
		res.Status = provider.StatusFailed
	}
	if after := oomKills(c.id); after > oomBefore && oomBefore >= 0 {
		res.Limit = provider.BudgetMemory
	} else if after := pidsRefused(c.id); x.exit != 0 && after > pidsBefore && pidsBefore >= 0 {
		res.Limit = provider.BudgetPids
	} else if oomBefore < 0 && x.exit == 137 {
		// Without the cgroup's counters, SIGKILL from inside a container
		// with nothing else to send it is the memory limit.
		res.Limit = provider.BudgetMemory
		meta["limit_inferred"] = "exit 137"
	}
	if len(req.OutputFiles) > 0 {
		res.OutputFiles = map[string][]byte{}
	}
	for _, name := range req.OutputFiles {
		x, err := p.exec(ctx, c, []string{"sh", "-c", `[ -L "$1" ] && exit 3; [ -e "$1" ] || exit 4; [ -f "$1" ] || exit 5; exec cat -- "$1"`,
			"sh", name}, nil, p.cfg.MaxOutput)
		if err != nil || x.ended {
			return p.endedOr(ctx, res, began, err)
		}
		refuse := func(why string) {
			if res.FileErrors == nil {
				res.FileErrors = map[string]string{}
			}
			res.FileErrors[name] = why
		}
		switch {
		case x.overflow:
			refuse(name + " is larger than max_output")
		case x.exit == 0:
			res.OutputFiles[name] = x.stdout
		case x.exit == 3:
			refuse(name + " is a symbolic link; airlock returns only regular files")
		case x.exit == 5:
			refuse(name + " is not a regular file (a FIFO, a directory or a device); airlock returns only regular files")
		}
	}
	return res, false, nil
}

// endedOr turns an interrupted step into a Result when the context
// ended, and into the error otherwise. Either way the container is
// poisoned.
func (p *Provider) endedOr(ctx context.Context, res provider.Result, began time.Time, err error) (provider.Result, bool, error) {
	if ctx.Err() != nil {
		res.Status = provider.Ended(ctx)
		if res.Timings.Start == 0 {
			res.Timings.Start = time.Since(began)
		}
		return res, true, nil
	}
	return res, true, provider.Sanitize(p.cfg.Name, "exec", err, "the Engine failed to run the command; see its log")
}

type execResult struct {
	stdout, stderr []byte
	exit           int
	overflow       bool // output passed the limit; the rest was not read
	ended          bool // the context ended first
}

// exec runs argv in c and collects at most limit bytes of output.
func (p *Provider) exec(ctx context.Context, c *ctr, argv []string, stdin []byte, limit int64) (execResult, error) {
	var x execResult
	cr, err := p.cli.ExecCreate(ctx, c.id, client.ExecCreateOptions{User: User, WorkingDir: "/tmp", Cmd: argv,
		Env: []string{"HOME=/tmp", "TMPDIR=/tmp"}, AttachStdin: true, AttachStdout: true, AttachStderr: true})
	if err != nil {
		return x, err
	}
	att, err := p.cli.ExecAttach(ctx, cr.ID, client.ExecAttachOptions{})
	if err != nil {
		return x, err
	}
	defer att.Close()
	go func() {
		_, _ = att.Conn.Write(stdin)
		_ = att.CloseWrite()
	}()
	var so, se bytes.Buffer
	done := make(chan bool, 1)
	go func() { done <- demux(att.Reader, &so, &se, limit) }()
	select {
	case x.overflow = <-done:
	case <-ctx.Done():
		att.Close()
		<-done
		x.ended = true
		return x, nil
	}
	x.stdout, x.stderr = so.Bytes(), se.Bytes()
	if x.overflow {
		return x, nil
	}
	// The stream ends when the process closed its output; its exit
	// status follows shortly.
	for {
		in, err := p.cli.ExecInspect(ctx, cr.ID, client.ExecInspectOptions{})
		if err != nil {
			if ctx.Err() != nil {
				x.ended = true
				return x, nil
			}
			return x, err
		}
		if !in.Running {
			x.exit = in.ExitCode
			return x, nil
		}
		select {
		case <-ctx.Done():
			x.ended = true
			return x, nil
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// demux splits the Engine's multiplexed stream (8-byte headers: stream,
// 0, 0, 0, big-endian length) into stdout and stderr, keeping at most
// limit bytes in all. A frame is read only up to what the limit still
// allows, so a huge frame is never buffered; overflow reports that the
// limit was passed.
func demux(r io.Reader, stdout, stderr *bytes.Buffer, limit int64) (overflow bool) {
	var hdr [8]byte
	var total int64
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return false
		}
		size := int64(binary.BigEndian.Uint32(hdr[4:]))
		dst := stdout
		if hdr[0] == 2 {
			dst = stderr
		}
		take := min(size, limit-total)
		n, err := io.CopyN(dst, r, take)
		total += n
		if take < size {
			return true
		}
		if err != nil {
			return false
		}
	}
}

// oomKills is the oom_kill count of c's cgroup, -1 when this host does
// not show it (a remote Engine, another cgroup layout).
func oomKills(id string) int {
	return cgroupCounter(id, "oom_kill ", "memory.events", "memory/docker/"+id+"/memory.oom_control")
}

// pidsRefused counts the forks c's pids limit refused, -1 when unknown.
func pidsRefused(id string) int {
	return cgroupCounter(id, "max ", "pids.events", "pids/docker/"+id+"/pids.events")
}

// cgroupCounter reads "key N" from the container's cgroup v2 file v2
// (under the systemd or cgroupfs layout) or its cgroup v1 file v1.
func cgroupCounter(id, key, v2, v1 string) int {
	for _, path := range []string{
		"/sys/fs/cgroup/system.slice/docker-" + id + ".scope/" + v2,
		"/sys/fs/cgroup/docker/" + id + "/" + v2,
		"/sys/fs/cgroup/" + v1,
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, key); ok {
				n, _ := strconv.Atoi(strings.TrimSpace(v))
				return n
			}
		}
	}
	return -1
}

func sortedNames(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
