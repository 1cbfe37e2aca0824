// Package sandbox runs commands under a profile.Profile with the guarantees
// the host can enforce, and says honestly which ones those are.
//
// The API mirrors os/exec: an Executor (built once per profile, after
// checking that the host gives every guarantee the profile requires)
// prepares a Process from a Cmd; the Process is started, waited for,
// signalled or killed like an exec.Cmd, and Wait returns a Result with a
// typed Status. Report lists each guarantee with its status, the mechanism
// that gives it and why.
//
// There is no fallback to unsandboxed execution: a setup step that fails
// fails the run, and a required guarantee the host lacks fails New.
//
// The package does not decide whether a command may run at all (package
// gate does) and owns no policy about paths (package profile does). The
// Linux mechanisms live in sandbox/internal/linux.
package sandbox
