package docker_test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/airlockhq/airlock/provider"
	"github.com/airlockhq/airlock/provider/docker"
)

// TestDockerSweepKillsImpostors: a call of a kept scope leaves a
// detached worker whose command line is the keeper's old one, "sleep
// 3600", and which keeps writing a file. The end-of-call sweep must end
// it: the next call sees the file stop growing and no such process.
func TestDockerSweepKillsImpostors(t *testing.T) {
	img := testImages(t)["python"]
	_, h := open(t, fmt.Sprintf("[sandbox.box]\nprovider = \"docker\"\nimage = %q\nscope = \"session\"", img))
	// python3 run with argv ["sleep", "3600"] runs the script named 3600
	// with exactly the command line the old sweep spared.
	res, err := h.Execute(context.Background(), provider.Request{Lang: "sh", Code: `
printf 'import time\nwhile True:\n    open("/tmp/beat", "a").write("x"); time.sleep(0.2)\n' > 3600
python3 -c '
import os
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv("/usr/bin/python3", ["sleep", "3600"])
    os._exit(0)
'
sleep 1
for d in /proc/[0-9]*; do
  [ "$(tr '\0' ' ' < $d/cmdline)" = "sleep 3600 " ] && read -r _ _ _ pp _ < $d/stat && echo "impostor ppid $pp"
done
wc -c < beat`})
	if err != nil {
		t.Fatal(err)
	}
	// Control: the impostor ran, as a child of PID 1, and wrote.
	if !strings.Contains(res.Stdout, "impostor ppid 1\n") || strings.HasSuffix(res.Stdout, "\n0\n") {
		t.Fatalf("control: no writing 'sleep 3600' child of PID 1 in the first call: %q %q", res.Stdout, res.Stderr)
	}
	res, err = h.Execute(context.Background(), provider.Request{Lang: "sh", Code: `
a=$(wc -c < beat); sleep 1.5; b=$(wc -c < beat)
n=0; for d in /proc/[0-9]*; do [ "$(tr '\0' ' ' < $d/cmdline 2>/dev/null)" = "sleep 3600 " ] && n=$((n+1)); done
echo "$a $b $n"`})
	if err != nil {
		t.Fatal(err)
	}
	if res.Metadata["scope_reused"] != "true" {
		t.Fatalf("the second call did not run in the same container: %v", res.Metadata)
	}
	var a, b, n int
	fmt.Sscan(res.Stdout, &a, &b, &n)
	if a != b || n != 0 {
		t.Errorf("after the sweep the impostor lives on: beat %d → %d bytes over 1.5s, %d 'sleep 3600' processes (%q)", a, b, n, res.Stderr)
	}
}

// TestDockerKeeperIsNotTheCalls: the keeper runs as its own uid, so no
// call can signal it; the control is a process of the call's own uid,
// which the call can signal.
func TestDockerKeeperIsNotTheCalls(t *testing.T) {
	img := testImages(t)["busybox"]
	_, h := open(t, fmt.Sprintf("[sandbox.box]\nprovider = \"docker\"\nimage = %q\nscope = \"session\"\ntimeout = \"20s\"", img))
	res, err := h.Execute(context.Background(), provider.Request{Lang: "sh", Code: `
sleep 30 & kill -0 $! && echo own-ok
for d in /proc/[0-9]*; do
  q=${d#/proc/}; [ "$q" = $$ ] && continue
  while read -r k v _; do [ "$k" = Uid: ] && { [ "$v" = 65533 ] && { kill -TERM "$q" 2>/dev/null && echo "signalled keeper $q" || echo keeper-safe; }; break; }; done < $d/status
done
kill $!`})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Stdout, "own-ok") || !strings.Contains(res.Stdout, "keeper-safe") || strings.Contains(res.Stdout, "signalled") {
		t.Errorf("%q %q", res.Stdout, res.Stderr)
	}
	// The scope still works: the keeper was not ended.
	res, err = h.Execute(context.Background(), provider.Request{Lang: "sh", Code: "echo again"})
	if err != nil || res.Stdout != "again\n" || res.Metadata["scope_reused"] != "true" {
		t.Errorf("next call: %v %+v", err, res)
	}
}

// TestDockerKeeperEndsAnUnendedCall: with airlock alive and attached but
// silent (frozen), the keeper ends the container once the call's
// deadline and its grace passed.
func TestDockerKeeperEndsAnUnendedCall(t *testing.T) {
	img := testImages(t)["busybox"]
	c, _ := open(t, fmt.Sprintf("[sandbox.box]\nprovider = \"docker\"\nimage = %q", img))
	p, err := docker.Open(context.Background(), c.Sandboxes()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// The deadline leaves a loaded host's Engine time to start the
	// container before the control looks at it.
	const deadline = 6 * time.Second
	id, err := p.StartUnendedCall(context.Background(), time.Now().Add(deadline))
	if id != "" {
		t.Cleanup(func() { exec.Command("docker", "rm", "-f", id).Run() })
	}
	if err != nil {
		t.Fatal(err)
	}
	running := func() bool {
		out, _ := exec.Command("docker", "inspect", "-f", "{{.State.Running}}", id).Output()
		return strings.TrimSpace(string(out)) == "true"
	}
	if !running() {
		t.Fatal("control: the container is not running right after its call started")
	}
	began := time.Now()
	for running() {
		if time.Since(began) > deadline+5*time.Second+20*time.Second {
			t.Fatal("the keeper did not end a call whose end never came")
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("ended %s after the call started", time.Since(began).Round(100*time.Millisecond))
}
