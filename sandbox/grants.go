package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/airlockhq/airlock/grant"
	"github.com/airlockhq/airlock/profile"
)

// ErrNotGranted is the class of errors for a run refused because its
// grants are missing, invalid, or for something the profile forbids.
var ErrNotGranted = errors.New("run not granted")

// GrantError says which grant failed and why.
type GrantError struct {
	Kind, Target string
	Err          error
}

func (e *GrantError) Error() string {
	if e.Kind == "" {
		return "sandbox: " + e.Err.Error()
	}
	return fmt.Sprintf("sandbox: grant for %s %q: %v", e.Kind, e.Target, e.Err)
}

// Unwrap returns both ErrNotGranted and the cause (e.g. grant.ErrReplayed).
func (e *GrantError) Unwrap() []error { return []error{ErrNotGranted, e.Err} }

// redeemGrants spends cmd's grants against what is about to run. The
// executor does not trust the gate: every token must verify under the
// issuer's key and bind this execution id, this exact command, this
// directory and this profile, and the profile itself must not deny what
// the token grants. A run that presents no grant must be one the profile
// allows on its own (auto_allow_in_sandbox).
func redeemGrants(p *profile.Profile, iss *grant.Issuer, cmd Cmd, dir string) error {
	if len(cmd.Grants) == 0 {
		if p.Access(profile.KindCommandExecute, commandText(cmd.Args)) == profile.AccessAllow {
			return nil
		}
		return &GrantError{Err: errors.New("this executor requires a grant from the gate and the command has none")}
	}
	want := grant.Binding{ExecutionID: cmd.ExecutionID, Dir: filepath.Clean(dir), Profile: p.Fingerprint()}
	if script, ok := shellScript(cmd.Args); ok {
		want.Command = script
	} else {
		want.Argv = cmd.Args
	}
	for _, c := range cmd.Grants {
		if p.Access(c.Kind, c.Target) == profile.AccessDeny {
			return &GrantError{Kind: c.Kind, Target: c.Target, Err: errors.New("the profile denies it; no grant can allow it")}
		}
		w := want
		w.Kind, w.Target = c.Kind, c.Target
		if _, err := iss.Redeem(c.Token, w); err != nil {
			return &GrantError{Kind: c.Kind, Target: c.Target, Err: err}
		}
	}
	return nil
}

// shellScript recognises the form adapters run a Bash tool call in:
// SHELL -c SCRIPT.
func shellScript(args []string) (string, bool) {
	if len(args) != 3 || args[1] != "-c" {
		return "", false
	}
	switch filepath.Base(args[0]) {
	case "sh", "bash", "dash", "zsh":
		return args[2], true
	}
	return "", false
}

func commandText(args []string) string {
	if s, ok := shellScript(args); ok {
		return s
	}
	out := ""
	for i, a := range args {
		if i > 0 {
			out += " "
		}
		out += a
	}
	return out
}
