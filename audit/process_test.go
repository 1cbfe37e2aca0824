package audit_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/airlockhq/airlock/audit"
)

// The test binary doubles as the child process of the multi-process tests:
// when childEnv is set, TestMain runs the child's part instead of the tests.
const childEnv = "AIRLOCK_AUDIT_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

// child appends events to $AIRLOCK_AUDIT_TEST_PATH as writer
// $AIRLOCK_AUDIT_TEST_WRITER. "append" appends $AIRLOCK_AUDIT_TEST_N events;
// "crash" appends until killed, printing "ack i" after each Append returns.
func child(mode string) int {
	l, err := audit.Open(os.Getenv("AIRLOCK_AUDIT_TEST_PATH"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	writer := os.Getenv("AIRLOCK_AUDIT_TEST_WRITER")
	n, _ := strconv.Atoi(os.Getenv("AIRLOCK_AUDIT_TEST_N"))
	if mode == "crash" {
		n = 1 << 30
	}
	out := bufio.NewWriter(os.Stdout)
	for seq := 0; seq < n; seq++ {
		d := detailFor(writer, seq)
		if mode == "crash" && seq%2 == 1 {
			// Big lines take long enough to write that the kill has a
			// fair chance of landing inside one.
			d["pad"] = strings.Repeat("x", 256<<10)
		}
		if err := l.Append(audit.Event{Type: audit.TypeDecision, ExecutionID: writer, Detail: d}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if mode == "crash" {
			fmt.Fprintf(out, "ack %d\n", seq)
			out.Flush()
		}
	}
	return 0
}

func childCmd(t *testing.T, mode, path, writer string, n int) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(),
		childEnv+"="+mode,
		"AIRLOCK_AUDIT_TEST_PATH="+path,
		"AIRLOCK_AUDIT_TEST_WRITER="+writer,
		"AIRLOCK_AUDIT_TEST_N="+strconv.Itoa(n),
	)
	cmd.Stderr = os.Stderr
	return cmd
}

func TestConcurrentProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	const procs, each = 4, 60
	want := map[string]int{}
	var cmds []*exec.Cmd
	for p := range procs {
		name := fmt.Sprintf("p%d", p)
		want[name] = each
		cmd := childCmd(t, "append", path, name, each)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	// And goroutines in this process, on their own Log, at the same time.
	l := openLog(t, path)
	var wg sync.WaitGroup
	for g := range 4 {
		name := fmt.Sprintf("g%d", g)
		want[name] = each
		wg.Go(func() {
			for seq := range each {
				if err := l.Append(audit.Event{Type: audit.TypeSpawn, Detail: detailFor(name, seq)}); err != nil {
					t.Errorf("Append: %v", err)
				}
			}
		})
	}
	wg.Wait()
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child %v: %v", cmd.Env[len(cmd.Env)-2], err)
		}
	}
	checkExact(t, path, want)
}

// TestCrashKeepsAcknowledgedEvents kills a writer mid-stream. Every event
// whose Append returned must be in the file, the file must still parse, and
// an event appended afterwards must not be lost to a torn line.
func TestCrashKeepsAcknowledgedEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	for round := range 3 {
		cmd := childCmd(t, "crash", path, fmt.Sprintf("crash%d", round), 0)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		acked := -1
		sc := bufio.NewScanner(stdout)
		killAt := 20 + 7*round
		for sc.Scan() {
			n, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "ack "))
			if err != nil {
				t.Fatalf("child said %q", sc.Text())
			}
			acked = n
			if n == killAt {
				if err := syscall.Kill(cmd.Process.Pid, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			}
		}
		cmd.Wait()
		if acked < killAt {
			t.Fatalf("child stopped at ack %d before it was killed", acked)
		}

		events, _ := readFile(t, path)
		seen := map[string]bool{}
		for _, e := range events {
			seen[fmt.Sprintf("%s/%v", e.ExecutionID, e.Detail["seq"])] = true
		}
		for seq := 0; seq <= acked; seq++ {
			if !seen[fmt.Sprintf("crash%d/%d", round, seq)] {
				t.Errorf("round %d: acknowledged event %d is not in the log", round, seq)
			}
		}
	}

	// A later writer ends any torn tail before its own line.
	l := openLog(t, path)
	if err := l.Append(audit.Event{Type: audit.TypeExit, ExecutionID: "after"}); err != nil {
		t.Fatal(err)
	}
	events, torn := readFile(t, path)
	if last := events[len(events)-1]; last.ExecutionID != "after" {
		t.Errorf("the last event is %+v, want the one appended after the crashes", last)
	}
	if torn != nil {
		t.Logf("the kills tore %d line(s): %v", len(torn.Lines), torn)
		if len(torn.Lines) > 3 {
			t.Errorf("%d torn lines from 3 kills", len(torn.Lines))
		}
	}
}

func TestTornTailIsEndedByNextAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := openLog(t, path)
	if err := l.Append(audit.Event{Type: audit.TypeDecision, ExecutionID: "one"}); err != nil {
		t.Fatal(err)
	}
	// What a writer killed mid-write leaves behind.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"time":"2025-01-01T00:00:00Z","type":"deci`)
	f.Close()

	events, torn := readFile(t, path)
	if len(events) != 1 || torn != nil {
		t.Fatalf("with a torn tail: %d events, torn %v; want 1 event and no error", len(events), torn)
	}
	if err := l.Append(audit.Event{Type: audit.TypeExit, ExecutionID: "two"}); err != nil {
		t.Fatal(err)
	}
	events, torn = readFile(t, path)
	if len(events) != 2 || events[1].ExecutionID != "two" {
		t.Fatalf("after the next Append: events %+v, want one and two", events)
	}
	if torn == nil || len(torn.Lines) != 1 || torn.Lines[0] != 2 {
		t.Fatalf("TornLineError = %v, want line 2", torn)
	}
}

// TestAppendVisibleOnReturn checks, through a separate descriptor, that an
// event is in the file as soon as Append returns.
func TestAppendVisibleOnReturn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := openLog(t, path)
	for i := range 20 {
		if err := l.Append(audit.Event{Type: audit.TypeDecision, Detail: map[string]any{"i": i}}); err != nil {
			t.Fatal(err)
		}
		events, _ := readFile(t, path)
		if len(events) != i+1 {
			t.Fatalf("after %d Appends the file has %d events", i+1, len(events))
		}
	}
}
