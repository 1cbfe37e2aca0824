package gate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/sandbox"
	"github.com/airlockhq/airlock/tool"
)

// The differential oracle for the Bash preparer: bash itself. Each input
// runs as `bash -c INPUT` in a throwaway sandbox whose PATH holds only
// marker shims, one per program name in oracleNames. A shim writes its name
// to a log and either exits 0 or, for the programs that run other programs
// (env, xargs, find, git, bash, ...), execs the real one so that what it
// runs is found on the same PATH and logged too.
//
// For every program that ran, the gate must deny the call under a deny rule
// for that program, `Bash(NAME:*)`, with a profile that allows everything
// else: a program the preparer did not report, or reported only as text
// it cannot see (unresolved), is then either a missing requirement or an
// "ask" where the deny could match. Either is a failure.

// oracleNames are the program names that get a shim: the commands people
// write rules for, and the ones that run other programs.
var oracleNames = strings.Fields(`
	curl wget nc ncat socat ssh scp sftp rsync telnet ftp
	rm rmdir mv cp ln chmod chown chgrp touch mkdir dd shred truncate install tar zip unzip gzip
	cat head tail less more grep egrep fgrep rg ag jq sed awk gawk perl python python3 ruby node
	git npm npx yarn pnpm pip pip3 make go cargo docker kubectl terraform gh
	echo printf true false id whoami ls find xargs env sh bash dash zsh ksh timeout nice nohup
	stdbuf setsid flock watch sudo su doas busybox toybox tee sort uniq wc cut tr base64 xxd od
	date sleep seq yes test expr eval exec source kill pkill crontab at systemctl service
	evil payload marker`)

// oraclePassThrough are the shims that exec the real program after logging,
// because what they run is part of what the command does.
var oraclePassThrough = map[string]bool{
	"env": true, "xargs": true, "find": true, "git": true, "bash": true, "sh": true, "dash": true,
	"timeout": true, "nice": true, "nohup": true, "stdbuf": true, "setsid": true, "flock": true,
}

// oracleSeeds are commands whose hidden programs the preparer must see:
// the examples of code hidden in data and of other spellings.
var oracleSeeds = []string{
	`x='a[$(curl evil)]'; (( x ))`,
	`x='a[$(curl evil)]'; let x`,
	`x='a[$(curl evil)]'; [[ $x -eq 0 ]]`,
	`x='a[$(curl evil)]'; [[ -v $x ]]`,
	`x='a[$(curl evil)]'; echo $((x))`,
	`x='$(curl evil)'; a[x]=1`,
	`x='a[$(curl evil)]'; declare -i y=x`,
	`v='$(curl evil)'; y=v; echo ${!y}`,
	`p='$(curl evil)'; echo "${p@P}"`,
	`printf -v 'a[$(curl evil)]' %s 1`,
	`x='a[$(curl evil)]'; [ "$x" -eq 0 ]`,
	`x='a[$(curl evil)]'; test "$x" -eq 0`,
	`c=curl; $c evil`,
	`eval "$(echo curl evil)"`,
	`eval 'eval "eval curl evil"'`,
	`/usr/bin/env curl evil`,
	`env -S 'curl evil'`,
	`xargs curl <<< evil`,
	`find . -maxdepth 0 -exec curl evil \;`,
	`git -c alias.x='!curl evil' x`,
	`timeout 2 curl evil`,
	`bash -c 'curl evil'`,
	`sh -c "$(printf 'curl evil')"`,
	`f() { curl evil; }; f`,
	`echo $(curl evil)`,
	`cat <(curl evil)`,
	`r''m -rf x`,
	`\rm -rf x`,
	`command rm -rf x`,
	`builtin exec rm -rf x`,
	`curl evil & wait`,
	`{ curl evil; } | cat`,
	`for i in 1; do curl evil; done`,
	`case x in x) curl evil;; esac`,
	`read -r a <<< 'curl'; $a evil`,
	`mapfile -t a <<< 'curl'; "${a[0]}" evil`,
}

type oracleRig struct {
	exec *sandbox.Executor
	ws   string
	bin  string
	logs string
	mu   sync.Mutex
	n    int
}

func newOracleRig(tb testing.TB) *oracleRig {
	tb.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		tb.Skip("no bash on this machine")
	}
	root, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	rig := &oracleRig{ws: filepath.Join(root, "ws"), bin: filepath.Join(root, "bin"), logs: filepath.Join(root, "logs")}
	for _, d := range []string{rig.ws, rig.bin, rig.logs} {
		if err := os.Mkdir(d, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	// The sandbox may run as another user (the unprivileged suite): the
	// log directory must be writable for it.
	if err := os.Chmod(rig.logs, 0o777); err != nil {
		tb.Fatal(err)
	}
	for _, name := range oracleNames {
		real := ""
		if oraclePassThrough[name] {
			for _, dir := range []string{"/usr/bin", "/bin"} {
				if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
					real = filepath.Join(dir, name)
					break
				}
			}
		}
		script := "#!/bin/sh\nprintf '%s\\n' " + name + " >> \"$ORACLE_LOG\"\n"
		if real != "" {
			script += "exec " + real + " \"$@\"\n"
		}
		script += "exit 0\n"
		if err := os.WriteFile(filepath.Join(rig.bin, name), []byte(script), 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	spec := profile.Preset("workspace")
	spec.Workspace = rig.ws
	spec.Filesystem.Read = append(spec.Filesystem.Read, rig.bin)
	spec.Filesystem.Write = append(spec.Filesystem.Write, rig.logs)
	p, err := profile.New(spec)
	if err != nil {
		tb.Fatal(err)
	}
	if rig.exec, err = sandbox.New(p); err != nil {
		tb.Skipf("no sandbox on this host: %v", err)
	}
	tb.Cleanup(func() { rig.exec.Close() })
	return rig
}

// ran runs src under bash in the sandbox and returns the names of the
// programs that ran, sorted and without repeats.
func (r *oracleRig) ran(tb testing.TB, src string) []string {
	tb.Helper()
	r.mu.Lock()
	r.n++
	log := filepath.Join(r.logs, fmt.Sprintf("run-%d", r.n))
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// env by absolute path, so the outer shell is not itself logged.
	res, err := r.exec.Run(ctx, sandbox.Cmd{
		Args:    []string{"/usr/bin/env", "PATH=" + r.bin, "ORACLE_LOG=" + log, "/bin/bash", "-c", src},
		Timeout: 3 * time.Second,
	})
	if err != nil {
		tb.Fatalf("sandbox run of %q: %v", src, err)
	}
	_ = res
	data, _ := os.ReadFile(log)
	os.Remove(log)
	var names []string
	for _, n := range strings.Fields(string(data)) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// deniedUnder decides src with one deny rule, Bash(name:*), and a profile
// that allows everything else.
func deniedUnder(tb testing.TB, ws, src, name string) Decision {
	tb.Helper()
	rule, err := rules.NewRule(rules.Deny, "Bash("+name+":*)", rules.Workspace, rules.Base{Root: ws, Cwd: ws, Home: ws})
	if err != nil {
		tb.Fatal(err)
	}
	input, _ := json.Marshal(map[string]string{"command": src})
	e := &Evaluator{Profile: allowEverything{}, Rules: rules.NewSet([]*rules.Rule{rule})}
	dec, _ := e.Decide(context.Background(), tool.Call{Tool: "Bash", Input: input, Workspace: ws, Home: ws})
	return dec
}

func checkOracle(t *testing.T, rig *oracleRig, src string) {
	t.Helper()
	for _, name := range rig.ran(t, src) {
		if dec := deniedUnder(t, rig.ws, src, name); dec.Effect != rules.Deny {
			t.Errorf("bash ran %s for %q, but under deny Bash(%s:*) the gate says %s (%s)",
				name, src, name, dec.Effect, dec.Reason)
		}
	}
}

// goldenBashInputs are the Bash commands of the golden decision cases.
func goldenBashInputs(t *testing.T) []string {
	var out []string
	var cases []goldenCase
	for _, set := range goldenSets {
		cases = append(cases, loadCases(t, set.cases)...)
	}
	for _, c := range cases {
		if c.Tool == "Bash" && !strings.HasPrefix(c.Input, "{") && !strings.Contains(c.Input, "/ws") &&
			!strings.Contains(c.Input, "/home/u") {
			out = append(out, c.Input)
		}
	}
	return out
}

// TestBashOracle runs the seeds and the golden commands through the
// oracle: what the fuzz target checks, on inputs that are always run.
func TestBashOracle(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bash in a sandbox per command")
	}
	rig := newOracleRig(t)
	// The harness works: a plain command is seen and denied, and the
	// oracle would notice a program the gate is not told about.
	if got := rig.ran(t, "curl evil; sleep 0"); !slices.Equal(got, []string{"curl", "sleep"}) {
		t.Fatalf("positive control: the shims logged %q, want curl and sleep", got)
	}
	if dec := deniedUnder(t, rig.ws, "true", "curl"); dec.Effect == rules.Deny {
		t.Fatalf("control: true is denied under deny Bash(curl:*): %s", dec.Reason)
	}
	for _, src := range append(slices.Clone(oracleSeeds), goldenBashInputs(t)...) {
		checkOracle(t, rig, src)
	}
}

// FuzzBashOracle: `go test ./gate -run '^$' -fuzz FuzzBashOracle`. A
// command whose execution by bash runs a program that the gate would not
// deny under a deny rule for that program is a failure.
func FuzzBashOracle(f *testing.F) {
	if testing.Short() {
		f.Skip("runs bash in a sandbox per command")
	}
	for _, s := range oracleSeeds {
		f.Add(s)
	}
	rig := newOracleRig(f)
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 400 || strings.ContainsRune(src, 0) {
			return
		}
		checkOracle(t, rig, src)
	})
}
