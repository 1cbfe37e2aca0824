package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/airlockhq/airlock/grant"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/tool"
)

// Sandbox is how a Bash call the gate allows (or that Claude Code's user
// is asked about) is rewritten to run confined. The command Claude Code
// runs becomes
//
//	AIRLOCK run --workspace WS --execution-id ID --grant TOKEN [--audit LOG] -- bash -c 'ORIGINAL'
//
// with every argument that holds anything but letters, digits and /._+-
// in single quotes, so the shell that runs it passes the original command
// through as one argument, byte for byte, whatever it contains. TOKEN is a single-use grant (package grant) bound to the
// execution id, the exact command text, the working directory, the
// profile's fingerprint and the requirement (command.execute of the whole
// command). "airlock run --grant" redeems it before anything runs, so it
// refuses a command the gate did not decide, an edited one, one run in
// another directory or under another profile, and the same one twice.
type Sandbox struct {
	// Always rewrites every Bash call; otherwise only the calls of a
	// workspace whose Policy says Sandbox.
	Always bool
	// Airlock is the absolute path of the airlock binary the rewritten
	// command runs.
	Airlock string
	// Issuer mints the grants. The process that runs the command must
	// redeem them with the same key and ledger (grant.OpenDir of the same
	// directory).
	Issuer *grant.Issuer
	// IssuerErr, when Issuer is nil, says why there is none; a call that
	// needs the rewrite is denied with it.
	IssuerErr error
	// OpenIssuer, when Issuer and IssuerErr are both unset, opens the
	// issuer at the first rewrite (grant.OpenDir): a hook call that
	// rewrites nothing, most of them, never reads the key.
	OpenIssuer func() (*grant.Issuer, error)
	// GrantTTL is how long a grant lasts; 0 means DefaultGrantTTL. A
	// call Claude Code's user is asked about must be answered within it.
	GrantTTL time.Duration
	// GrantDir, when set, is where Issuer keeps its key. A workspace
	// that contains it is refused: the sandbox could read the key.
	GrantDir string
	// AuditLog, when set, is passed to airlock run as --audit, so the
	// run's spawn, enforcement and exit events join the decision's.
	AuditLog string

	openOnce sync.Once
}

// issuer returns Issuer, opening it with OpenIssuer the first time.
func (s *Sandbox) issuer() (*grant.Issuer, error) {
	s.openOnce.Do(func() {
		if s.Issuer == nil && s.IssuerErr == nil && s.OpenIssuer != nil {
			s.Issuer, s.IssuerErr = s.OpenIssuer()
		}
	})
	return s.Issuer, s.IssuerErr
}

// DefaultGrantTTL is how long a rewritten command's grant lasts unless
// Sandbox.GrantTTL says otherwise: long enough for a person to answer an
// "ask", short enough that a leaked command is soon worthless.
const DefaultGrantTTL = 10 * time.Minute

// rewrite returns the Bash input with its command replaced by the
// sandboxed one; every other field is kept.
func (s *Sandbox) rewrite(call tool.Call, input json.RawMessage, p *profile.Profile) (json.RawMessage, error) {
	iss, issErr := s.issuer()
	switch {
	case iss == nil && issErr != nil:
		return nil, issErr
	case iss == nil:
		return nil, errors.New("the hook has no grant issuer")
	case !filepath.IsAbs(s.Airlock):
		return nil, fmt.Errorf("the path of airlock %q is not absolute", s.Airlock)
	}
	if s.GrantDir != "" && within(filepath.Clean(s.GrantDir), filepath.Clean(call.Workspace)) {
		return nil, fmt.Errorf("the grant key directory %s is inside the workspace, where the sandbox could read it; set AIRLOCK_GRANT_DIR to a directory outside it", s.GrantDir)
	}
	fields, command, err := bashFields(input)
	if err != nil {
		return nil, err
	}
	if strings.IndexByte(command, 0) >= 0 {
		return nil, errors.New("the command contains a NUL byte, which no shell can run")
	}
	ttl := s.GrantTTL
	if ttl <= 0 {
		ttl = DefaultGrantTTL
	}
	tok, err := iss.Issue(grant.Binding{
		ExecutionID: call.ExecutionID, Command: command, Dir: call.Cwd, Profile: p.Fingerprint(),
		Kind: tool.KindCommandExecute, Target: command,
	}, ttl)
	if err != nil {
		return nil, err
	}
	args := []string{s.Airlock, "run", "--workspace", call.Workspace, "--execution-id", call.ExecutionID,
		"--grant", string(tok)}
	if s.AuditLog != "" {
		args = append(args, "--audit", s.AuditLog)
	}
	args = append(args, "--", "bash", "-c", command)
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = shellWord(a)
	}
	rewritten, err := json.Marshal(strings.Join(quoted, " "))
	if err != nil {
		return nil, err
	}
	fields["command"] = rewritten
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(fields); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimSpace(b.Bytes())), nil
}

// bashFields splits a Bash tool input into its fields and its command.
func bashFields(input json.RawMessage) (map[string]json.RawMessage, string, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(input, &fields); err != nil {
		return nil, "", fmt.Errorf("the Bash input: %v", err)
	}
	var command string
	if err := json.Unmarshal(fields["command"], &command); err != nil || command == "" {
		return nil, "", errors.New("the Bash input has no \"command\" string")
	}
	return fields, command, nil
}

// shellWord returns s as one shell word: as it is when it is made only of
// characters no shell treats specially, else quoted by ShellQuote.
func shellWord(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._+-", r))
	}) {
		return s
	}
	return ShellQuote(s)
}

// ShellQuote returns s as one POSIX shell word: in single quotes, inside
// which nothing is special, with each single quote written as '\” (end
// the quotes, an escaped quote, start again). Any byte but NUL survives.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellTools are the tools whose "command" the sandbox rewrite wraps,
// so in sandbox mode they run confined, sorted.
func shellTools() []string {
	var names []string
	for _, n := range tool.ClaudeCodeTools() {
		if tool.ClaudeCode(n).Shell {
			names = append(names, n)
		}
	}
	return names
}
