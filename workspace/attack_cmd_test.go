package workspace_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// deny Bash(rm:*): the command runs rm by routes the gate cannot see
// (an interpreter's subprocess, find -exec, xargs, a script, a shell
// function), or copies the program to run it under another name. The
// evidence is the victim file, which must still be on the host.
func TestAttackRuleCommand(t *testing.T) {
	sandboxtest.PlantSecrets(t)
	// execs: the probe calls execve on the masked file, which the exec
	// watch reports; a shell's own PATH search (dash's, for a function or
	// a script's last command) sees the mask is not executable and fails
	// without an exec, and cp cannot read it: refused, but only the
	// command's own error says so.
	probes := map[string]struct {
		args  []string
		execs bool
	}{
		"python-subprocess": {sandboxtest.Py(`import subprocess; subprocess.run(["rm", "victim"], check=True)`), true},
		"find-exec":         {sandboxtest.Sh(`find . -name victim -exec rm {} \;; test ! -e victim`), true},
		"xargs":             {sandboxtest.Sh(`echo victim | xargs rm`), true},
		"script":            {sandboxtest.Sh(`printf '#!/bin/sh\nrm "$@"\n' > del.sh && chmod +x del.sh && ./del.sh victim`), false},
		"function":          {sandboxtest.Sh(`f() { rm "$@"; }; f victim`), false},
		"absolute":          {sandboxtest.Sh(`/bin/rm victim`), true},
		"copy":              {sandboxtest.Sh(`cp /usr/bin/rm ./myrm && ./myrm victim`), false},
		"env":               {sandboxtest.Sh(`env rm victim`), true},
	}
	setup := func(t *testing.T) (ws, victim string) {
		ws = sandboxtest.Workspace(t)
		victim = filepath.Join(ws, "victim")
		must(t, os.WriteFile(victim, []byte("keep me\n"), 0o644))
		return ws, victim
	}
	for name, pr := range probes {
		t.Run(name, func(t *testing.T) {
			p := sandboxtest.Probe{Args: pr.args}
			ws, victim := setup(t)
			if o := sandboxtest.New(t, "workspace", ws, nil).Run(t, p); o.ExitCode != 0 || sandboxtest.Exists(victim) {
				t.Fatalf("positive control failed: without the rule the sandboxed probe did not remove the file\n%s", o)
			}
			ws, victim = setup(t)
			o := sandboxtest.New(t, "workspace", ws, withRules(t, ws, "Bash(rm:*)")).Run(t, p)
			if !sandboxtest.Exists(victim) {
				t.Errorf("ATTACK SUCCEEDED: %s was removed\n%s", victim, o)
			}
			if o.ExitCode == 0 {
				t.Errorf("the probe reported success\n%s", o)
			}
			// The refusal is reported where the supervisor sees it (the
			// mask watch, as root; Report.Silent says so otherwise).
			reported := false
			for _, d := range o.Result.Denials {
				reported = reported || (d.Kind == "exec" || d.Kind == "filesystem") && d.Target == "/usr/bin/rm"
			}
			if pr.execs && !reported && !sandboxtest.Unprivileged() {
				t.Errorf("the Result lists no refusal of /usr/bin/rm: %+v\n%s", o.Result.Denials, o)
			}
		})
	}
}
