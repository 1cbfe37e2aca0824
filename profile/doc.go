// Package profile owns the sandbox Profile: what a sandboxed command may
// read, write, execute and reach, which environment it sees, its budgets,
// and which guarantees it requires of the host.
//
// A Profile is built from a Spec by New, which validates every field and
// fails with a *FieldError naming the field and the fix. After New the
// Profile is immutable and carries a SHA-256 fingerprint over a canonical
// encoding, which grants bind to. Presets (workspace, read-only, strict)
// are Specs; TOML files and CLI flags are applied on top of them.
//
// The package does not enforce anything: package sandbox turns a Profile
// into namespaces, mounts, Landlock rules, seccomp and limits, and package
// gate reads Access for its first decision step.
package profile
