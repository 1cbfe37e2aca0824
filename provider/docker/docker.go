// Package docker is the execution provider on a Docker Engine, through
// the official Go client. Each execution runs in a fresh container (or
// the container of its invocation or session scope) that is locked down
// by default: a read-only root filesystem with a size-capped tmpfs /tmp
// (the run user's) as the working directory, a non-root user, every
// capability dropped, no-new-privileges, no network, and memory (without
// swap), cpu and pids budgets. Output is capped while it streams. Each
// container holds its own deadline, so its work ends even when airlock
// is killed (see keeper.go). Containers carry
// io.airlock.* labels; a provider removes its own orphans at start and
// never touches a container it did not label. Images are referenced by
// id or digest only, never pulled, and refused when they declare volumes.
//
// It owns no policy: the catalog (package provider) says which sandbox
// an agent may use and with which budgets.
package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/airlockhq/airlock/provider"
)

// Labels on every container the provider creates.
const (
	LabelManaged   = "io.airlock.managed"   // "1"
	LabelOwner     = "io.airlock.owner"     // host/pid/start-time of the airlock process
	LabelSandbox   = "io.airlock.sandbox"   // the sandbox name
	LabelScope     = "io.airlock.scope"     // hash of the scope key ("" for execution scope)
	LabelNonce     = "io.airlock.nonce"     // unique per create, to find it when the create's outcome is unknown
	LabelExecution = "io.airlock.execution" // the first execution id
)

// User is the uid:gid every process in the container runs as.
const User = "65534:65534"

// removeTimeout bounds a removal, which runs even after the caller's
// deadline (a removal is never abandoned).
const removeTimeout = 60 * time.Second

// Driver is the docker provider for the catalog.
func Driver() provider.Driver {
	return provider.Driver{
		Name: "docker",
		Capabilities: provider.Capabilities{
			Network:     []string{provider.NetworkNone, provider.NetworkAll},
			InputFiles:  true,
			OutputFiles: true,
			Budgets: []string{provider.BudgetMemory, provider.BudgetCPU, provider.BudgetPids,
				provider.BudgetOutput, provider.BudgetScratch, provider.BudgetTimeout},
			Scopes: []string{provider.ScopeExecution, provider.ScopeInvocation, provider.ScopeSession},
			Image:  true,
		},
		Open: func(cfg provider.Config) (provider.Provider, error) { return Open(context.Background(), cfg) },
	}
}

// Provider runs one sandbox's executions on a Docker Engine.
type Provider struct {
	cfg    provider.Config
	cli    *client.Client
	owner  string
	scopes *provider.Scopes[*ctr]
	wg     sync.WaitGroup // background creates and removals

	mu      sync.Mutex
	pending map[string]chan struct{} // scope → closed when an abandoned create settled
}

// ctr is one container of ours.
type ctr struct {
	id    string
	nonce string
	// lease is the attach connection to the keeper's stdin (nil for a
	// direct container); closing it ends the container.
	lease *client.HijackedResponse
}

// Open connects to the Engine named by DOCKER_HOST (default the local
// socket), checks the image and removes the orphans a crashed airlock on
// this host left. It creates nothing.
func Open(ctx context.Context, cfg provider.Config) (*Provider, error) {
	unavailable := func(msg string) error {
		return &provider.Error{Class: provider.ErrUnavailable, Sandbox: cfg.Name, Op: "connect", Msg: msg}
	}
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return nil, unavailable("DOCKER_HOST is not a valid address; unset it or fix it")
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		cli.Close()
		host := cli.DaemonHost()
		if strings.Contains(host, "@") {
			host = "DOCKER_HOST" // may carry a user name or password
		}
		return nil, unavailable("no Docker Engine answers at " + host + "; start dockerd or set DOCKER_HOST")
	}
	img, err := cli.ImageInspect(ctx, cfg.Image)
	if err != nil {
		cli.Close()
		if cerrdefs.IsNotFound(err) {
			return nil, &provider.Error{Class: provider.ErrConfig, Sandbox: cfg.Name, Op: "image",
				Msg: "image " + cfg.Image + " is not on this Engine; build or load it (airlock never pulls)"}
		}
		return nil, provider.Sanitize(cfg.Name, "image", err, "the Engine could not inspect the image; see its log")
	}
	if img.Config != nil && len(img.Config.Volumes) > 0 {
		cli.Close()
		return nil, &provider.Error{Class: provider.ErrConfig, Sandbox: cfg.Name, Op: "image",
			Msg: "image " + cfg.Image + " declares volumes, which would persist outside the container; use an image without VOLUME"}
	}
	p := &Provider{cfg: cfg, cli: cli, owner: ownerLabel(os.Getpid()), pending: map[string]chan struct{}{}}
	p.scopes = &provider.Scopes[*ctr]{Max: cfg.MaxScopes, Create: p.createScope, Destroy: p.remove}
	if err := p.Reconcile(ctx); err != nil {
		cli.Close()
		return nil, err
	}
	return p, nil
}

// Close removes every container of the provider and waits for it.
func (p *Provider) Close() error {
	err := p.scopes.Close()
	p.wg.Wait()
	return errors.Join(err, p.cli.Close())
}

// ownerLabel names an airlock process so that a later one can tell
// whether it still runs: the start time guards against pid reuse.
func ownerLabel(pid int) string {
	host, _ := os.Hostname()
	return host + "/" + strconv.Itoa(pid) + "/" + startTime(pid)
}

// Owner is the io.airlock.owner label of the containers this process
// creates.
func Owner() string { return ownerLabel(os.Getpid()) }

// startTime is field 22 of /proc/PID/stat, "" when the process is gone.
func startTime(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		if f := strings.Fields(s[i+1:]); len(f) > 19 {
			return f[19]
		}
	}
	return ""
}

// ownerGone reports whether the owner label names a process of this
// host that no longer runs. Another host's containers are never judged.
func ownerGone(label string) bool {
	host, _ := os.Hostname()
	parts := strings.Split(label, "/")
	if len(parts) != 3 || parts[0] != host {
		return false
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil {
		return false
	}
	return startTime(pid) != parts[2]
}

// Reconcile removes the containers labelled by an airlock of this host
// that is no longer running. Containers without io.airlock.managed, and
// those of a live airlock, are never touched.
func (p *Provider) Reconcile(ctx context.Context) error {
	list, err := p.cli.ContainerList(ctx, client.ContainerListOptions{All: true,
		Filters: client.Filters{}.Add("label", LabelManaged+"=1")})
	if err != nil {
		return provider.Sanitize(p.cfg.Name, "reconcile", err, "the Engine could not list containers; see its log")
	}
	for _, c := range list.Items {
		if c.Labels[LabelManaged] == "1" && ownerGone(c.Labels[LabelOwner]) {
			if err := p.remove(&ctr{id: c.ID}); err != nil {
				return err
			}
		}
	}
	return nil
}

// create makes and starts a container. The Engine's calls run detached
// from ctx so that their outcome is always learnt: when ctx ends first,
// create returns at once and the container, once the Engine made it, is
// removed in the background (Close waits for that). Until then the
// scope, if any, stays blocked (see createScope).
func (p *Provider) create(ctx context.Context, scope, execID string, netNone bool) (*ctr, error) {
	return p.createWith(ctx, spec{scope: scope, execID: execID, netNone: netNone, cmd: keeper, start: true})
}

// spec says what createNow makes: the keeper as PID 1, attached and
// started, or (the direct path) the command under its deadline wrapper,
// created with its stdin open and not yet started so that it can be
// attached first. Either way the container's stdin is open once: the
// Engine closes it when airlock's attach connection goes.
type spec struct {
	scope, execID string
	netNone       bool
	cmd           []string
	start         bool // the keeper: KeeperUser, attached and started here
}

func (p *Provider) createWith(ctx context.Context, sp spec) (*ctr, error) {
	scope := sp.scope
	type made struct {
		c   *ctr
		err error
	}
	done := make(chan made, 1)
	settled := make(chan struct{})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		c, err := p.createNow(sp)
		done <- made{c, err}
		close(settled)
	}()
	select {
	case m := <-done:
		return m.c, m.err
	case <-ctx.Done():
	}
	p.mu.Lock()
	p.pending[scope] = settled
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		if m := <-done; m.err == nil {
			_ = p.remove(m.c)
		}
		p.mu.Lock()
		if p.pending[scope] == settled {
			delete(p.pending, scope)
		}
		p.mu.Unlock()
	}()
	return nil, ctx.Err()
}

func (p *Provider) createNow(sp spec) (*ctr, error) {
	ctx, cancel := context.WithTimeout(context.Background(), removeTimeout)
	defer cancel()
	c := &ctr{nonce: provider.NewID()}
	cfg := p.cfg
	netMode := container.NetworkMode("none")
	if cfg.Network.Mode == provider.NetworkAll && !sp.netNone {
		netMode = "bridge"
	}
	pids := int64(cfg.Pids)
	user := User
	if sp.start {
		user = KeeperUser
	}
	res, err := p.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name: "airlock-" + cfg.Name + "-" + c.nonce[:12],
		Config: &container.Config{
			Image: cfg.Image, Cmd: sp.cmd, User: user, WorkingDir: "/tmp",
			OpenStdin: true, StdinOnce: true, AttachStdin: true, AttachStdout: !sp.start, AttachStderr: !sp.start,
			Env:             []string{"HOME=/tmp", "TMPDIR=/tmp"},
			NetworkDisabled: netMode == "none",
			Labels: map[string]string{LabelManaged: "1", LabelOwner: p.owner, LabelSandbox: cfg.Name,
				LabelScope: sp.scope, LabelNonce: c.nonce, LabelExecution: sp.execID},
		},
		HostConfig: &container.HostConfig{
			NetworkMode:    netMode,
			ReadonlyRootfs: true,
			// Owned by User outright: an Engine copies the image's /tmp
			// mode over mode= (an image without /tmp, or with a 0755
			// one, and 20.10 with /tmp as the working directory), and
			// the run's user must be able to write its scratch anyway.
			Tmpfs: map[string]string{"/tmp": fmt.Sprintf("rw,nosuid,nodev,size=%d,mode=1777,uid=%s,gid=%s",
				cfg.Scratch, strings.Split(User, ":")[0], strings.Split(User, ":")[1])},
			CapDrop:     []string{"ALL"},
			SecurityOpt: []string{"no-new-privileges"},
			LogConfig:   container.LogConfig{Type: "none"},
			Resources: container.Resources{
				Memory: cfg.Memory, MemorySwap: cfg.Memory, // no swap
				NanoCPUs: int64(cfg.CPU * 1e9), PidsLimit: &pids,
			},
		},
	})
	if err != nil {
		// The answer may be lost while the container exists: look for
		// it by its nonce before saying it does not.
		if !cerrdefs.IsInvalidArgument(err) && !cerrdefs.IsNotFound(err) && !cerrdefs.IsConflict(err) {
			if rerr := p.removeByNonce(c.nonce); rerr != nil {
				return nil, &provider.Error{Class: provider.ErrUnavailable, Sandbox: cfg.Name, Op: "create container",
					Msg: "the Engine's answer was lost and the container could not be found to remove; retry when the Engine answers"}
			}
		}
		return nil, provider.Sanitize(cfg.Name, "create container", err, "the Engine refused to create the container; see its log")
	}
	c.id = res.ID
	if !sp.start {
		return c, nil
	}
	if err := p.attachKeeper(ctx, c); err != nil {
		rerr := p.remove(c)
		return nil, errors.Join(provider.Sanitize(cfg.Name, "attach container", err, "the Engine did not attach to the container; see its log"), rerr)
	}
	if _, err := p.cli.ContainerStart(ctx, c.id, client.ContainerStartOptions{}); err != nil {
		// A failed start poisons the container.
		rerr := p.remove(c)
		return nil, errors.Join(provider.Sanitize(cfg.Name, "start container", err, "the container did not start; see the Engine's log"), rerr)
	}
	return c, nil
}

func (p *Provider) createScope(ctx context.Context, key string) (*ctr, error) {
	scope := scopeHash(key)
	// A create of this scope whose outcome was not yet known when its
	// caller gave up blocks the scope until it is.
	p.mu.Lock()
	settled := p.pending[scope]
	p.mu.Unlock()
	if settled != nil {
		select {
		case <-settled:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	// A container of this scope that a failed removal left is removed
	// first: a replacement never runs beside what it replaces.
	if err := p.removeWhere(LabelScope + "=" + scope); err != nil {
		return nil, err
	}
	return p.create(ctx, scope, "", false)
}

func (p *Provider) removeByNonce(nonce string) error { return p.removeWhere(LabelNonce + "=" + nonce) }

func (p *Provider) removeWhere(label string) error {
	ctx, cancel := context.WithTimeout(context.Background(), removeTimeout)
	defer cancel()
	list, err := p.cli.ContainerList(ctx, client.ContainerListOptions{All: true,
		Filters: client.Filters{}.Add("label", LabelManaged+"=1").Add("label", LabelOwner+"="+p.owner).Add("label", label)})
	if err != nil {
		return provider.Sanitize(p.cfg.Name, "list containers", err, "the Engine could not list containers; see its log")
	}
	for _, c := range list.Items {
		if err := p.remove(&ctr{id: c.ID}); err != nil {
			return err
		}
	}
	return nil
}

// remove force-removes c and returns once the Engine confirmed it.
func (p *Provider) remove(c *ctr) error {
	if c.lease != nil {
		c.lease.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), removeTimeout)
	defer cancel()
	_, err := p.cli.ContainerRemove(ctx, c.id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return provider.Sanitize(p.cfg.Name, "remove container", err, "the container could not be removed; it will be removed at the next start")
	}
	return nil
}
