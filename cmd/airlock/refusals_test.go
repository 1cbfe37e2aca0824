package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/audit"
	"github.com/airlockhq/airlock/sandbox"
)

// refusalCase is one kind of refusal airlock run must make visible.
type refusalCase struct {
	name    string
	args    []string // between "run" and "--"
	script  string   // run by sh -c in the workspace
	line    string   // the airlock line on stderr
	reason  string   // in the Report's denial and the audit event
	control string   // a script that does the same without the refusal
}

// TestRunRefusalsVisible: each refusal the issue names (a read of a
// masked path, a write to a protected path, an exec refused by strict, a
// DNS lookup with the network off) gets an airlock line on stderr, a
// denial in the --report and an enforcement event in the --audit log,
// whose spawn event comes first; the controls get none. As root and as
// uid 65534, where masked reads are refused unseen: there the Report says
// so, and the command's "Permission denied" gets a hint instead.
func TestRunRefusalsVisible(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	bin := buildAirlock(t)
	for _, nobody := range []bool{false, true} {
		name := "root"
		if nobody {
			name = "uid 65534"
		}
		t.Run(name, func(t *testing.T) {
			if nobody {
				if _, err := exec.LookPath("setpriv"); err != nil {
					t.Skip("setpriv not installed")
				}
			}
			root, err := os.MkdirTemp("", "airlock-refusals-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(root) })
			ws, home := filepath.Join(root, "ws"), filepath.Join(root, "home")
			for _, d := range []string{ws, home} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Chown(d, 65534, 65534); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(root, 0o755); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v %s", err, out)
			}
			if err := os.WriteFile(filepath.Join(ws, ".env"), []byte("TOKEN=masked-secret\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			exec.Command("chown", "-R", "65534:65534", ws).Run()
			maskLine, maskReason := "airlock: filesystem: read refused: masked by deny", "read refused: masked by deny"
			if nobody {
				maskLine, maskReason = "airlock: 'Permission denied' may be a read of a path the sandbox masks", "perhaps of a masked path"
			}
			cases := []refusalCase{
				{"masked read", []string{"--deny", "**/.env"}, "cat .env", maskLine, maskReason, "cat /dev/null"},
				{"protected write", nil, "echo x > .git/hooks/pre-commit", "airlock: a write was refused", "read-only in the sandbox", "echo x > ok.txt"},
				{"strict exec", []string{"--profile", "strict"}, "cp /bin/true /tmp/t && /tmp/t", "airlock: exec: exec refused", "outside the profile's exec paths", "/bin/true"},
				{"dns with no network", nil, `python3 -c 'import socket; socket.getaddrinfo("registry.example", 443)'`, "airlock: a name lookup failed", "name lookup with the network off", "true"},
			}
			run := func(args ...string) (string, string) {
				full := append([]string{bin}, args...)
				if nobody {
					full = append([]string{"setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "--"}, full...)
				}
				cmd := exec.Command(full[0], full[1:]...)
				cmd.Dir = ws
				cmd.Env = cliEnv(home)
				_, so, se := runCmd(t, cmd)
				return so, se
			}
			for i, c := range cases {
				for _, control := range []bool{false, true} {
					script := c.script
					if control {
						script = c.control
					}
					log := filepath.Join(home, "audit-"+string(rune('a'+i))+map[bool]string{false: "", true: "-control"}[control]+".jsonl")
					args := append(append([]string{"run", "--workspace", ws, "--report", "-", "--audit", log}, c.args...), "--", "sh", "-c", script)
					out, errOut := run(args...)
					var res struct {
						Denials []sandbox.Denial `json:"denials"`
						Silent  []string         `json:"silent_refusals"`
					}
					at := strings.Index(out, "{")
					if at < 0 {
						t.Fatalf("%s: no report on stdout\n%s\n%s", c.name, out, errOut)
					}
					if err := json.Unmarshal([]byte(out[at:]), &res); err != nil {
						t.Fatalf("%s: report: %v\n%s\n%s", c.name, err, out, errOut)
					}
					denied := false
					for _, d := range res.Denials {
						denied = denied || strings.Contains(d.Reason, c.reason)
					}
					events := readEvents(t, log)
					enforced := false
					for _, e := range events {
						enforced = enforced || (e.Type == audit.TypeEnforcement && strings.Contains(e.Reason, c.reason))
					}
					saw := strings.Contains(errOut, c.line)
					if control {
						if saw || denied || enforced {
							t.Errorf("%s control: reported a refusal that did not happen: stderr %q, denials %+v", c.name, errOut, res.Denials)
						}
						continue
					}
					if !saw || strings.Count(errOut, c.line) != 1 {
						t.Errorf("%s: want one line %q on stderr:\n%s", c.name, c.line, errOut)
					}
					if !denied {
						t.Errorf("%s: no denial with %q in the Report: %+v", c.name, c.reason, res.Denials)
					}
					if !enforced {
						t.Errorf("%s: no enforcement event with %q in the audit log: %+v", c.name, c.reason, events)
					}
					if len(events) == 0 || events[0].Type != audit.TypeSpawn {
						t.Errorf("%s: the audit log does not start with the spawn event: %+v", c.name, events)
					}
					if nobody && c.name == "masked read" && !strings.Contains(strings.Join(res.Silent, "\n"), "reads of masked paths") {
						t.Errorf("uid 65534: the Report does not say masked reads are silent: %q", res.Silent)
					}
				}
			}
		})
	}
}

func readEvents(t *testing.T, path string) []audit.Event {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	var out []audit.Event
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e audit.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, e)
	}
	return out
}

// TestSayDenials: the end of a run says only the refusals no line said
// while it ran, escaped, at most maxEndLines of them, then one line that
// points at the report.
func TestSayDenials(t *testing.T) {
	var ds []sandbox.Denial
	for i := 0; i < 30; i++ {
		ds = append(ds, sandbox.Denial{Kind: "filesystem", Target: "/ws/q" + string(rune('a'+i%26)), Reason: "moved aside"})
		ds = append(ds, sandbox.Denial{Kind: "exec", Target: "/tmp/x", Reason: "said already", Live: true})
	}
	ds[0].Target = "/ws/evil\nairlock: forged"
	var b strings.Builder
	sayDenials(&b, ds)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != maxEndLines+1 || !strings.Contains(lines[maxEndLines], "more refusals not shown") {
		t.Fatalf("want %d lines and one saying more followed, got %d:\n%s", maxEndLines, len(lines), b.String())
	}
	if strings.Contains(b.String(), "said already") || strings.Contains(b.String(), "\nairlock: forged") {
		t.Errorf("a live refusal said twice, or a target forged a line:\n%s", b.String())
	}
}
