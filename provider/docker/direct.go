package docker

import (
	"bytes"
	"context"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/airlockhq/airlock/provider"
)

// direct reports whether req can run as its container's own PID 1: an
// execution-scope call with no files to copy in or out. It then needs
// one create and one start, no exec and no kill, like `docker run --rm`.
func direct(key string, req provider.Request) bool {
	return key == "" && len(req.Files) == 0 && len(req.OutputFiles) == 0
}

// runDirect runs req as the container's command: attached before start,
// output demultiplexed under max_output, the exit status from the
// Engine's wait, the container removed (confirmed) before returning.
func (p *Provider) runDirect(ctx context.Context, req provider.Request, netNone bool, meta map[string]string, began time.Time) (provider.Result, error) {
	res := provider.Result{ExitCode: -1, Metadata: meta}
	ended := func() (provider.Result, error) {
		res.Status = provider.Ended(ctx)
		meta["poisoned"] = "true"
		return res, nil
	}
	deadline, _ := ctx.Deadline()
	c, err := p.createWith(ctx, spec{execID: req.ExecutionID, netNone: netNone,
		cmd: directWrapper(containerSeconds(deadline), commandLine(req))})
	if err != nil {
		if ctx.Err() != nil {
			res.Timings.Start = time.Since(began)
			return ended()
		}
		return provider.Result{}, err
	}
	defer func() {
		if rerr := p.remove(c); rerr != nil && err == nil {
			err = rerr
		}
	}()
	meta["container"] = c.id[:12]
	fail := func(op string, e error) (provider.Result, error) {
		if ctx.Err() != nil {
			return ended()
		}
		return provider.Result{}, provider.Sanitize(p.cfg.Name, op, e, "the Engine failed to run the container; see its log")
	}
	att, err := p.cli.ContainerAttach(ctx, c.id, client.ContainerAttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return fail("attach", err)
	}
	defer att.Close()
	wait := p.cli.ContainerWait(ctx, c.id, client.ContainerWaitOptions{Condition: container.WaitConditionNextExit})
	if _, err = p.cli.ContainerStart(ctx, c.id, client.ContainerStartOptions{}); err != nil {
		return fail("start container", err)
	}
	res.Timings.Start = time.Since(began)
	ran := time.Now()
	go func() {
		_, _ = att.Conn.Write(req.Stdin)
		_ = att.CloseWrite()
	}()
	var so, se bytes.Buffer
	done := make(chan bool, 1)
	go func() { done <- demux(att.Reader, &so, &se, p.cfg.MaxOutput) }()
	var overflow bool
	select {
	case overflow = <-done:
	case <-ctx.Done():
		att.Close()
		<-done
		res.Timings.Run = time.Since(ran)
		return ended()
	}
	res.Stdout, res.Stderr = so.String(), se.String()
	if overflow {
		res.Timings.Run = time.Since(ran)
		res.Status = provider.StatusOutputLimitExceeded
		meta["poisoned"] = "true"
		return res, nil
	}
	select {
	case w := <-wait.Result:
		res.ExitCode = int(w.StatusCode)
	case err := <-wait.Error:
		return fail("wait", err)
	case <-ctx.Done():
		return ended()
	}
	res.Timings.Run = time.Since(ran)
	res.Status = provider.StatusSucceeded
	if res.ExitCode != 0 {
		res.Status = provider.StatusFailed
		if in, err := p.cli.ContainerInspect(ctx, c.id, client.ContainerInspectOptions{}); err == nil &&
			in.Container.State != nil && in.Container.State.OOMKilled {
			res.Limit = provider.BudgetMemory
		}
	}
	return res, nil
}

// commandLine is the argv that runs req.
func commandLine(req provider.Request) []string {
	switch {
	case req.Code != "" && req.Lang == provider.LangSh:
		return []string{"sh", "-c", req.Code}
	case req.Code != "":
		return []string{"python3", "-c", req.Code}
	}
	return req.Argv
}
