// Package linux is the Linux backend of the sandbox: the stage-2 helper
// that runs inside fresh namespaces and turns a Config into a mount view,
// Landlock rules, limits and a seccomp filter before it execs the command,
// plus the supervisor-side pieces (cgroups, host probes) it needs.
//
// It does not decide what a profile allows (package profile and package
// sandbox do) and it never falls back to running a command unconfined:
// every step fails closed with an error naming the step.
package linux
