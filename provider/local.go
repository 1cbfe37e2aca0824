package provider

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	// The local provider's runs serve their networks in process.
	_ "github.com/airlockhq/airlock/egress/netstack"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
	"github.com/airlockhq/airlock/workspace"
)

// LocalDriver is the provider on airlock's own sandbox engine: every
// budget through cgroups, the profile's network policy including host:port
// allowlists with private ranges blocked, and a fresh scratch workspace
// per execution (or per scope).
func LocalDriver() Driver {
	return Driver{
		Name: "local",
		Capabilities: Capabilities{
			Network:              []string{NetworkNone, NetworkAll, NetworkAllow},
			PrivateRangeBlocking: true,
			InputFiles:           true,
			OutputFiles:          true,
			Budgets:              []string{BudgetMemory, BudgetCPU, BudgetPids, BudgetOutput, BudgetScratch, BudgetTimeout},
			Scopes:               []string{ScopeExecution, ScopeInvocation, ScopeSession},
			Profiles:             true,
		},
		Open: openLocal,
	}
}

type local struct {
	cfg    Config
	python string
	root   string   // holds every scratch workspace of this provider
	rootf  *os.File // root, opened once: workspaces are reached through it
	scopes *Scopes[string]
}

func openLocal(cfg Config) (Provider, error) {
	// The profile is read again for each execution (workspace.Load);
	// one that does not load fails the provider now.
	if _, err := profile.LookupPreset(cfg.Profile); err != nil {
		if _, err = profile.LoadFile(cfg.Profile); err != nil {
			return nil, &Error{Class: ErrConfig, Sandbox: cfg.Name, Op: "profile", Msg: err.Error()}
		}
	}
	// The system interpreter first: a PATH entry under $HOME (a pyenv
	// shim) is hidden inside the sandbox.
	python := ""
	for _, p := range []string{"/usr/bin/python3", "/usr/local/bin/python3"} {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			python = p
			break
		}
	}
	if python == "" {
		python, _ = exec.LookPath("python3")
	}
	root, err := os.MkdirTemp("", "airlock-local-")
	if err != nil {
		return nil, &Error{Class: ErrUnavailable, Sandbox: cfg.Name, Op: "scratch", Msg: err.Error()}
	}
	rootf, err := os.Open(root)
	if err != nil {
		os.RemoveAll(root)
		return nil, &Error{Class: ErrUnavailable, Sandbox: cfg.Name, Op: "scratch", Msg: err.Error()}
	}
	l := &local{cfg: cfg, python: python, root: root, rootf: rootf}
	l.scopes = &Scopes[string]{Max: cfg.MaxScopes,
		Create: func(context.Context, string) (string, error) { return os.MkdirTemp(root, "scope-") },
		// The scope's sandboxes have ended (their process trees die
		// with each run), so removing the directory is the whole scope.
		Destroy: os.RemoveAll,
	}
	return l, nil
}

func (l *local) Close() error {
	err := l.scopes.Close()
	return errors.Join(err, l.rootf.Close(), os.RemoveAll(l.root))
}

func (l *local) Execute(ctx context.Context, req Request) (Result, error) {
	began := time.Now()
	meta := map[string]string{"provider": "local", "scope": l.cfg.Scope}
	var dir string
	var lease *Lease[string]
	if key := ScopeKey(l.cfg.Scope, req.Identity); key != "" {
		var err error
		if lease, err = l.scopes.Acquire(ctx, key); err != nil {
			if ctx.Err() != nil {
				return Result{Status: Ended(ctx), ExitCode: -1, Metadata: meta, Timings: Timings{Start: time.Since(began)}}, nil
			}
			return Result{}, &Error{Class: ErrUnavailable, Sandbox: l.cfg.Name, Op: "scope", Msg: err.Error()}
		}
		dir = lease.Value()
		if lease.Reused {
			meta["scope_reused"] = "true"
		}
	} else {
		var err error
		if dir, err = os.MkdirTemp(l.root, "exec-"); err != nil {
			return Result{}, &Error{Class: ErrUnavailable, Sandbox: l.cfg.Name, Op: "scratch", Msg: err.Error()}
		}
		defer os.RemoveAll(dir)
	}
	res, poison, err := l.run(ctx, req, dir, meta, began)
	if lease != nil {
		if rerr := lease.Release(poison); rerr != nil && err == nil {
			err = &Error{Class: ErrProvider, Sandbox: l.cfg.Name, Op: "scope", Msg: rerr.Error()}
		}
	}
	return res, err
}

func (l *local) run(ctx context.Context, req Request, dir string, meta map[string]string, began time.Time) (Result, bool, error) {
	fail := func(class error, op string, err error) (Result, bool, error) {
		return Result{}, false, &Error{Class: class, Sandbox: l.cfg.Name, Op: op, Msg: err.Error()}
	}
	ended := func() (Result, bool, error) {
		return Result{Status: Ended(ctx), ExitCode: -1, Metadata: meta, Timings: Timings{Start: time.Since(began)}}, true, nil
	}
	// The workspace is reached through the handle on root, which the
	// sandbox cannot write: a run can leave anything inside it, but not
	// swap the workspace itself.
	wd, err := openWorkdir(l.rootf, filepath.Base(dir))
	if err != nil {
		return fail(ErrProvider, "scratch", err)
	}
	defer wd.Close()
	var refused map[string]string
	for _, name := range sortedKeys(req.Files) {
		if err := wd.WriteFile(ctx, name, req.Files[name]); err != nil {
			if ctx.Err() != nil {
				return ended()
			}
			if refused == nil {
				refused = map[string]string{}
			}
			refused[name] = err.Error()
		}
	}
	if refused != nil {
		meta["ended"] = "input files"
		return Result{Status: StatusFailed, ExitCode: -1, FileErrors: refused, Metadata: meta,
			Timings: Timings{Start: time.Since(began)}}, false, nil
	}
	argv := req.Argv
	switch {
	case req.Code != "" && req.Lang == LangSh:
		argv = []string{"/bin/sh", "-c", req.Code}
	case req.Code != "":
		if l.python == "" {
			return fail(ErrUnavailable, "python", errors.New("no python3 on this host's PATH; install it or use lang sh"))
		}
		argv = []string{l.python, "-c", req.Code}
	}
	deadline, _ := ctx.Deadline()
	// The scratch directory's policy: the configured profile with this
	// provider's budgets and network, and the managed and user rule
	// layers compiled into it (workspace.Load).
	o := workspace.Overrides{Workspace: dir, Profile: l.cfg.Profile, Scratch: true,
		Budgets: &profile.Budgets{
			Memory: profile.Size(l.cfg.Memory), Pids: l.cfg.Pids, CPU: l.cfg.CPU,
			Output: profile.Size(l.cfg.MaxOutput), Scratch: profile.Size(l.cfg.Scratch),
			WallTime: profile.Duration(time.Until(deadline)),
		}}
	// A budget the host cannot enforce fails the run instead of being
	// silently skipped: this provider declared them all.
	o.Layer.Require = append(o.Layer.Require, profile.ResourceLimits.String())
	net := l.cfg.Network
	if req.Network == NetworkNone {
		net = Network{Mode: NetworkNone}
	}
	o.Layer.Network = profile.NetworkSpec{Mode: net.Mode, Allow: net.Allow}
	if net.Mode != NetworkNone {
		o.Layer.Require = append(o.Layer.Require, profile.PrivateRangeBlock.String())
	}
	pol, err := workspace.Load(dir, o)
	if err != nil {
		return fail(ErrConfig, "profile", err)
	}
	p := pol.Profile
	ex, err := sandbox.New(p)
	if err != nil {
		if errors.Is(err, sandbox.ErrUnavailable) {
			return fail(ErrUnavailable, "start", err)
		}
		return fail(ErrProvider, "start", err)
	}
	defer ex.Close()
	prep := time.Since(began)
	sres, err := ex.Run(ctx, sandbox.Cmd{
		Args: argv, Stdin: bytes.NewReader(req.Stdin), ExecutionID: req.ExecutionID,
		Timeout: time.Until(deadline),
	})
	if err != nil {
		if ctx.Err() != nil {
			return ended()
		}
		if errors.Is(err, sandbox.ErrUnavailable) {
			return fail(ErrUnavailable, "start", err)
		}
		return fail(ErrProvider, "start", err)
	}
	res := Result{ExitCode: sres.ExitCode, Stdout: string(sres.Stdout), Stderr: string(sres.Stderr), Metadata: meta,
		Timings: Timings{Start: prep + sres.Timings.Setup, Run: sres.Timings.Run}}
	switch sres.Status {
	case sandbox.StatusSucceeded:
		res.Status = StatusSucceeded
	case sandbox.StatusTimedOut:
		res.Status = StatusTimedOut
	case sandbox.StatusOutputLimitExceeded:
		res.Status = StatusOutputLimitExceeded
	case sandbox.StatusCancelled:
		res.Status = Ended(ctx)
		if ctx.Err() == nil {
			res.Status = StatusCancelled
		}
	case sandbox.StatusKilledOOM:
		res.Status, res.Limit = StatusFailed, BudgetMemory
	case sandbox.StatusLimitExceeded:
		res.Status, res.Limit = StatusFailed, BudgetPids
		for _, d := range sres.Denials {
			if d.Kind != "" && d.Kind != "timeout" && d.Kind != "output" {
				res.Limit = d.Kind
			}
		}
	default:
		res.Status = StatusFailed
	}
	if len(req.OutputFiles) > 0 {
		res.OutputFiles = map[string][]byte{}
	}
	for _, name := range req.OutputFiles {
		data, err := wd.ReadFile(ctx, name, l.cfg.MaxOutput)
		switch {
		case err == nil:
			res.OutputFiles[name] = data
		case errors.Is(err, errMissing):
		case ctx.Err() != nil:
			// The all-in deadline covers the copies too.
			res.Status, res.OutputFiles = Ended(ctx), nil
			return res, true, nil
		default:
			if res.FileErrors == nil {
				res.FileErrors = map[string]string{}
			}
			res.FileErrors[name] = err.Error()
		}
	}
	poison := res.Status != StatusSucceeded && res.Status != StatusFailed
	return res, poison, nil
}
