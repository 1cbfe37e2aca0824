package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// lastTick is the highest "tickN" on the screen, -1 for none.
func lastTick(s string) int {
	n := -1
	for _, m := range regexp.MustCompile(`tick(\d+)`).FindAllStringSubmatch(s, -1) {
		if v, _ := strconv.Atoi(m[1]); v > n {
			n = v
		}
	}
	return n
}

// outerUser is a person at a terminal running airlock from an
// interactive bash on the test's pty: as root, and (when the test runs
// as root) as uid 65534 with a workspace of its own.
type outerUser struct {
	name  string
	ws    string
	outer []string // the outer shell
	bin   string   // airlock, as the outer shell names it
}

func outerUsers(t *testing.T) []outerUser {
	t.Helper()
	bin := buildAirlock(t)
	shell := []string{"bash", "--norc", "--noprofile", "-i"}
	users := []outerUser{{"root", t.TempDir(), shell, bin}}
	if os.Geteuid() == 0 {
		uws, argv := unprivilegedCommand(t, bin)
		a := argv()
		users = append(users, outerUser{"uid 65534", uws, append(append([]string{"setpriv"}, a[:len(a)-1]...), shell...), a[len(a)-1]})
	}
	return users
}

// prompt is the outer bash's prompt, once airlock has ended and the
// shell reads its terminal again.
const prompt = "bash-"

// TestRunTTYSuspend: ^Z on a command that is not a shell (python under
// --tty, in an outer bash -i on the test's pty) suspends airlock as a
// terminal program: the outer shell reports the job stopped and takes
// commands, python prints nothing while stopped, and fg resumes it, its
// output going on. As root and uid 65534. Every step is bounded (30s a
// screen, 60s for the shell's end), so a stuck run fails with the
// transcript instead of hanging the suite.
func TestRunTTYSuspend(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	for _, us := range outerUsers(t) {
		t.Run(us.name, func(t *testing.T) {
			u := startUserTTY(t, us.ws, us.outer...)
			at := u.waitFor(t, 0, prompt)
			u.send(t, fmt.Sprintf("%s run --workspace %s -- python3 -u -c 'import time; [print(\"tick%%d\" %% i) or time.sleep(0.2) for i in range(100000)]'\n", us.bin, us.ws))
			at = u.waitFor(t, at, "tick3")
			u.send(t, "\x1a")
			at = u.waitFor(t, at, "Stopped")
			// The outer shell has the terminal back.
			u.send(t, "echo alive-$((6*7))\n")
			at = u.waitFor(t, at, "alive-42")
			stopped := lastTick(u.screen())
			time.Sleep(time.Second) // five ticks, were python running
			if now := lastTick(u.screen()); now != stopped {
				t.Fatalf("python went on while airlock was stopped: tick%d, then tick%d:\n%q", stopped, now, u.screen())
			}
			u.send(t, "fg\n")
			from := u.waitFor(t, at, "tick"+strconv.Itoa(stopped+2))
			to := u.waitFor(t, from, "tick"+strconv.Itoa(stopped+4))
			// Raw again: the user's terminal adds no \r of its own (a
			// line in flight at ^Z may reach it before that).
			if s := u.screen(); strings.Contains(s[from:to], "\r\r\n") {
				t.Errorf("after fg the user's terminal is not raw again:\n%q", s[from:to])
			}
			u.send(t, "\x03")
			at = u.waitFor(t, at, "KeyboardInterrupt")
			// Keys typed before airlock ends are the run's, as at any
			// terminal program: the next line waits for the prompt.
			at = u.waitFor(t, at, prompt)
			// $((...)) in the marker: the echo of the typed line is not
			// the shell's answer.
			u.send(t, "echo status-$?-$((6*7)); exit\n")
			u.waitFor(t, at, "-42")
			u.exit(t)
			if s := u.screen(); strings.Contains(s, "no job control") {
				t.Errorf("the outer bash has no job control:\n%q", s)
			}
		})
	}
}
