package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/airlockhq/airlock/audit"
	"github.com/airlockhq/airlock/internal/cli"
	"github.com/airlockhq/airlock/internal/proctime"
	"github.com/airlockhq/airlock/internal/visible"
	"github.com/airlockhq/airlock/sandbox"
)

// Exit statuses of airlock run besides the command's own.
const (
	exitTimeout = 124 // the wall-clock budget ended the run
	exitSetup   = 125 // the sandbox could not be set up; nothing ran
	// The command could not run in the sandbox, as timeout(1) says it.
	exitNotExecutable = 126
	exitNotFound      = 127
	exitKilled        = 137 // killed for memory, output or cancellation (128+SIGKILL)
)

func runRun(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("airlock run", flag.ContinueOnError)
	var pf cli.ProfileFlags
	pf.Register(fs)
	report := fs.String("report", "", "write the Result as JSON to `FILE`")
	auditLog := fs.String("audit", "", "append spawn, enforcement and exit events to the audit log at `PATH` (\"default\": "+audit.DefaultPath()+")")
	execID := fs.String("execution-id", "", "the execution id the events carry (default: a random one)")
	tty := ttyAuto
	fs.Var(&tty, "tty", "give CMD a terminal of its own: `auto` (when stdin and stdout are terminals), always (--tty) or never; without one, CMD's stdin, stdout and stderr are pipes")
	var publish publishFlag
	fs.Var(&publish, "publish", "make `[[ADDR:]HOST_PORT:]PORT`, a port CMD listens on in the sandbox, reachable on the host's ADDR (default 127.0.0.1; another address needs the profile's network.publish_addresses) (repeatable; HOST_PORT defaults to PORT)")
	noTTY := fs.Bool("no-tty", false, "never give CMD a terminal (--tty=never)")
	grantTok := fs.String("grant", "", "run only with this single-use `TOKEN` from the gate, which must be for exactly this command, directory, profile and --execution-id (the Claude Code hook's sandbox rewrite passes it)")
	help := func(w io.Writer) {
		fmt.Fprint(w, `Usage: airlock run [FLAGS] -- CMD [ARGS...]

Runs CMD inside the sandbox: an empty private HOME and /tmp, the workspace
read-write (agent-persistence paths read-only), system paths read-only, no
network, a scrubbed environment, seccomp, Landlock and cgroup budgets.

Exit status: CMD's own; 124 when --timeout ends it; 125 when the sandbox
could not be set up (one line on stderr says why); 126 when CMD is not
executable and 127 when it is not found in the sandbox; 137 when a memory,
output or write budget or a second signal ended it; 128+N when CMD died of
signal N. The first SIGINT, SIGTERM or SIGHUP goes to CMD, with the
effect it has outside a sandbox.

Flags:
`)
	}
	if code, ok := cli.ParseCommandFlags(fs, args, help, exitSetup, stdout, stderr); !ok {
		return code
	}
	if *noTTY {
		tty = ttyNever
	}
	argv := fs.Args()
	if len(argv) == 0 {
		fmt.Fprintln(stderr, "airlock run: no command given; usage: airlock run [FLAGS] -- CMD [ARGS...]")
		return exitSetup
	}
	sigs, caught := catchSignals()
	defer func() {
		<-caught
		signal.Stop(sigs)
	}()
	// Before the profile reads the workspace's .airlock/: a run whose
	// supervisor died may have planted a profile there.
	finished, journalErr := sandbox.FinishInterruptedRuns()
	for _, d := range finished {
		fmt.Fprintf(stderr, "airlock: an interrupted earlier run: %s: %s (%s)\n", d.Kind, d.Reason, visible.Text(d.Target))
	}
	// A journal whose check cannot finish stops runs in its own
	// workspace only, before that workspace's .airlock/ is read.
	pf.BeforeWorkspaceFile = func(ws string) error {
		elsewhere, block := sandbox.JournalsBlocking(journalErr, ws)
		for _, je := range elsewhere {
			fmt.Fprintf(stderr, "airlock: warning: the check of an earlier run in %s could not finish; look at it before running git there (airlock doctor lists it): %s\n", visible.Text(je.Workspace), visible.Text(je.Error()))
		}
		if block != nil {
			return fmt.Errorf("%w; airlock doctor lists the pending journals", block)
		}
		return nil
	}
	pol, err := pf.LoadChecked(fs)
	if err != nil {
		fmt.Fprintln(stderr, "airlock:", visible.Text(err.Error()))
		return exitSetup
	}
	p := pol.Profile
	// The gateway's process starts now, so that its start overlaps the
	// run's preparation instead of following the TAP device's hand-over.
	opts, gw, err := gatewayOptions(p, sandbox.Options{})
	if err != nil {
		fmt.Fprintln(stderr, "airlock run:", visible.Text(err.Error()))
		return exitSetup
	}
	if gw != nil {
		gw.Warm()
		defer gw.Close()
	}
	if err := checkPublish(publish, p); err != nil {
		fmt.Fprintln(stderr, "airlock run:", visible.Text(err.Error()))
		return exitUsage
	}
	if wd, _ := os.Getwd(); wd != "" {
		if err := gitWorktreeRefusal(argv, wd, p); err != nil {
			fmt.Fprintln(stderr, "airlock:", err)
			return exitSetup
		}
	}
	// The report's destination is opened before the run: a path that
	// cannot be written fails now, not after the command did its work.
	reportOut, err := openReport(*report, stdout)
	if err != nil {
		fmt.Fprintln(stderr, "airlock:", visible.Text(err.Error()))
		return exitSetup
	}
	defer reportOut.Close()
	ex, err := newRunExecutor(p, *grantTok, *execID, opts)
	if err != nil {
		fmt.Fprintln(stderr, "airlock:", visible.Text(err.Error()))
		return exitSetup
	}
	// The run takes the Executor's warm helper; one a failed Prepare
	// left goes with the Executor.
	defer ex.Close()
	warnAddressSpace(stderr, ex.Report(), pf.AsksMemory())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wd, _ := os.Getwd()
	dir := ""
	if wd != "" && p.CanRead(wd) {
		dir = wd
	}
	var log *audit.Log
	if *auditLog != "" {
		path := *auditLog
		if path == "default" {
			path = audit.DefaultPath()
		}
		if log, err = audit.Open(path); err != nil {
			fmt.Fprintln(stderr, "airlock:", visible.Text(err.Error()))
			return exitSetup
		}
		defer log.Close()
		if *execID == "" {
			*execID = newExecutionID()
		}
	}
	// The spawn event is written as the command starts, so a log
	// follower sees a long run while it runs.
	spawned := false
	onStart := func(level sandbox.Level) {
		if log != nil {
			spawned = true
			ev := spawnEvent(*execID, p.Fingerprint(), argv, level)
			if len(publish) > 0 {
				if ev.Detail == nil {
					ev.Detail = map[string]any{}
				}
				ev.Detail["published"] = publishedDetail(publish)
			}
			if aerr := log.Append(ev); aerr != nil {
				fmt.Fprintln(stderr, "airlock: audit:", visible.Text(aerr.Error()))
			}
		}
	}
	cmd := sandbox.Cmd{
		Args: argv, Dir: dir,
		Stdin: os.Stdin, Stdout: stdout, Stderr: stderr,
		ExecutionID: *execID,
		Grants:      grantClaims(*grantTok, argv),
		Publish:     publish,
	}
	var term *userTerminal
	if out, ok := stdout.(*os.File); ok && tty.wants(os.Stdin, out) {
		if term, cmd.Terminal, err = newUserTerminal(os.Stdin, out); err != nil {
			fmt.Fprintln(stderr, "airlock:", visible.Text(err.Error()))
			return exitSetup
		}
		defer term.restore()
		cmd.Terminal.Suspend = term.suspend
		// The sandbox's own lines (refusals as they happen) reach the
		// raw terminal too.
		cmd.Stderr = crlfWriter{stderr}
	}
	res, err := runForwarding(ctx, cancel, ex, func(proc *sandbox.Process) {
		eol := "\n"
		if term != nil {
			term.follow(proc)
			eol = "\r\n" // the terminal is raw by now
		}
		for _, pub := range publish {
			fmt.Fprintf(stderr, "airlock: published: http://%s:%d/ on the host reaches port %d in the sandbox%s", pub.HostAddr, pub.HostPort, pub.Port, eol)
		}
		onStart(ex.Report().Level)
	}, cmd, sigs, caught)
	// Before any line of airlock's own, which a raw terminal would not
	// start at the left margin.
	term.restore()
	if res != nil {
		if exitStatus(res) != 0 {
			res.Denials = append(res.Denials, privateTmpHints(argv, p)...)
		}
	}
	if log != nil {
		if aerr := recordRun(log, *execID, p.Fingerprint(), argv, res, err, spawned); aerr != nil {
			fmt.Fprintln(stderr, "airlock: audit:", visible.Text(aerr.Error()))
		}
	}
	if err != nil && res == nil {
		fmt.Fprintln(stderr, "airlock:", visible.Text(err.Error()))
		if h := setupHint(err, p.Spec().Budgets.Pids); h != "" {
			fmt.Fprintln(stderr, h)
		}
		sayDenials(stderr, privateTmpHints(argv, p))
		switch {
		case errors.Is(err, sandbox.ErrCommandNotFound):
			return exitNotFound
		case errors.Is(err, sandbox.ErrNotExecutable):
			return exitNotExecutable
		}
		return exitSetup
	}
	if errors.Is(err, sandbox.ErrProtectCheck) {
		// The workspace may hold what the run planted: never exit 0.
		// Its names are the run's: escaped.
		fmt.Fprintln(stderr, "airlock:", visible.Text(err.Error()))
		return exitSetup
	}
	if err != nil {
		fmt.Fprintln(stderr, "airlock: warning:", visible.Text(err.Error()))
	}
	if reportOut != nil {
		// The whole process, not only the sandbox's part: what start-up
		// and the end of the run cost must show in the Report.
		res.Timings.ProcessInit, res.Timings.Process = processInit, proctime.Since()
		if werr := reportOut.write(res, pol.ProfileFiles); werr != nil {
			fmt.Fprintln(stderr, "airlock: write report:", visible.Text(werr.Error()))
		}
	}
	sayDenials(stderr, res.Denials)
	return exitStatus(res)
}

// maxEndLines caps the refusal lines said when the run ends; the Report
// lists every one.
const maxEndLines = 20

// sayDenials says on stderr the refusals no line said while the run ran
// (the end-of-run check, budgets, unix sockets), at most maxEndLines.
func sayDenials(stderr io.Writer, denials []sandbox.Denial) {
	n := 0
	for _, d := range denials {
		if d.Live {
			continue
		}
		if n++; n > maxEndLines {
			fmt.Fprintf(stderr, "airlock: more refusals not shown; --report FILE lists them\n")
			return
		}
		// Targets are names the command chose (a file it created, a
		// quarantined path): escaped, a newline in one cannot forge a line.
		fmt.Fprintf(stderr, "airlock: %s: %s (%s)\n", visible.Text(d.Kind), visible.Text(d.Reason), visible.Text(d.Target))
	}
}

// runForwarding runs cmd, passing the first signal from sigs to the
// command and cancelling the run at the second. A signal that comes
// before the command runs is passed on once it does.
func runForwarding(ctx context.Context, cancel context.CancelFunc, ex *sandbox.Executor, started func(*sandbox.Process), cmd sandbox.Cmd, sigs <-chan os.Signal, caught <-chan struct{}) (*sandbox.Result, error) {
	proc, err := ex.Prepare(ctx, cmd)
	if err != nil {
		return nil, err
	}
	// Caught before the command runs, so none of them can end the
	// supervisor before its end-of-run check.
	<-caught
	if err := proc.Start(); err != nil {
		return nil, err
	}
	started(proc)
	done := make(chan struct{})
	go func() {
		forwarded := false
		for {
			select {
			case sig := <-sigs:
				if forwarded {
					cancel()
					continue
				}
				forwarded = true
				if proc.Signal(sig) != nil {
					cancel()
				}
			case <-done:
				return
			}
		}
	}()
	res, err := proc.Wait()
	close(done)
	return res, err
}

// catchSignals catches, on a goroutine of its own, the signals
// runForwarding passes to the command (the first SIGINT, SIGTERM or
// SIGHUP goes to it, with the effect it would have outside the sandbox,
// Process.Signal; a second one ends the run; one that comes before the
// command runs is passed on once it does) and SIGPIPE: a closed stdout
// (airlock run ... | head) must not kill the supervisor before its
// end-of-run check; with SIGPIPE caught, the write fails instead (and the
// command's own SIGPIPE is its own: a caught signal is reset to the
// default on exec). caught is closed once all are; the caller waits for
// it before the command starts. Each signal's first Notify is a round
// trip through the runtime's signal thread, which it starts: about
// 0.35 ms of thread wake-ups, which overlap the profile's load and the
// host probe this way instead of coming before or after them
// (docs/BENCHMARKS.md).
func catchSignals() (sigs chan os.Signal, caught chan struct{}) {
	sigs, caught = make(chan os.Signal, 4), make(chan struct{})
	go func() {
		defer close(caught)
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
		signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	}()
	return sigs, caught
}

func exitStatus(res *sandbox.Result) int {
	switch res.Status {
	case sandbox.StatusSucceeded:
		return 0
	case sandbox.StatusTimedOut:
		return exitTimeout
	case sandbox.StatusKilledOOM, sandbox.StatusOutputLimitExceeded, sandbox.StatusCancelled:
		return exitKilled
	case sandbox.StatusLimitExceeded:
		// A budget the command went past is a failure even when the
		// command ended on its own with 0 before the supervisor's check
		// caught it (the write budget is checked every 10 ms).
		if res.ExitCode > 0 {
			return res.ExitCode
		}
		return exitKilled
	}
	if res.ExitCode >= 0 {
		return res.ExitCode
	}
	if sig := signalNumber(res.Signal); sig > 0 {
		return 128 + sig
	}
	return 1
}

func signalNumber(name string) int {
	for i := 1; i < 65; i++ {
		if syscall.Signal(i).String() == name {
			return i
		}
	}
	return 0
}

// recordRun appends what one run did to the audit log: the spawn unless
// it was written at the start (or the setup failure), each enforcement the
// sandbox recorded, and the exit.
func recordRun(log *audit.Log, id, fingerprint string, argv []string, res *sandbox.Result, runErr error, spawned bool) error {
	base := audit.Event{ExecutionID: id, Tool: "airlock run", Profile: fingerprint}
	if res == nil {
		spawn := spawnEvent(id, fingerprint, argv, "")
		spawn.Decision = "deny"
		spawn.Reason = "sandbox setup failed: " + runErr.Error()
		return log.Append(spawn)
	}
	if !spawned {
		if err := log.Append(spawnEvent(id, fingerprint, argv, res.Level)); err != nil {
			return err
		}
	}
	for _, d := range res.Denials {
		ev := base
		ev.Type = audit.TypeEnforcement
		ev.Decision = "deny"
		ev.Reason = d.Reason
		ev.Requirement = &audit.Requirement{Kind: d.Kind, Target: d.Target}
		if err := log.Append(ev); err != nil {
			return err
		}
	}
	exit := base
	exit.Type = audit.TypeExit
	exit.Detail = map[string]any{"status": res.Status, "exit_code": res.ExitCode, "run_ms": res.Timings.Run.Milliseconds(), "setup_ms": res.Timings.Setup.Milliseconds()}
	if len(res.Published) > 0 {
		exit.Detail["published"] = publishedDetail(res.Published)
	}
	return log.Append(exit)
}

// spawnEvent is the event of a command started in the sandbox.
func spawnEvent(id, fingerprint string, argv []string, level sandbox.Level) audit.Event {
	ev := audit.Event{ExecutionID: id, Tool: "airlock run", Profile: fingerprint, Type: audit.TypeSpawn}
	ev.Requirement = &audit.Requirement{Kind: "command.execute", Target: strings.Join(argv, " ")}
	if level != "" {
		ev.Detail = map[string]any{"level": level}
	}
	return ev
}

func newExecutionID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "run-" + hex.EncodeToString(b[:])
}
