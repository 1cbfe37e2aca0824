// Package landlock owns the Landlock ruleset a sandboxed command runs under:
// which filesystem, TCP and scope rights are handled, which path-beneath
// rules grant them back, and which of those features the running kernel's
// Landlock ABI can enforce.
//
// Strength is never silent. Plan and Restrict both return a Status that
// lists every requested feature with the minimum ABI it needs and whether
// this kernel enforces it, plus the paths whose rules were not added and
// why. A caller that requires a feature checks Status and fails closed; this
// package does not decide that for it.
//
// Restrict confines the calling OS thread (and, from ABI 8, every thread of
// the process). It is meant to run in the stage-2 helper right before
// execve, with the goroutine locked to its thread; see Restrict.
//
// The package does not own which paths a profile grants (package profile and
// package sandbox decide that and hand over plain path lists), mount
// namespaces or the filesystem view, resource limits, or seccomp filters
// (package seccomp). Landlock only removes rights the process already has:
// it is one layer among those, not a replacement for any of them.
package landlock
