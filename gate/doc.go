// Package gate decides an agent's tool calls.
//
// An [Evaluator] takes a tool.Call, derives its requirements (package
// tool) and decides each in the order of DESIGN.md section 1:
//
//  1. the profile's access for the requirement ([ProfileAccess], which
//     *profile.Profile implements; no profile makes everything Gated):
//     Deny ends the decision; Gated and Allow go on (unresolved paths and
//     unparsed shell are always Gated);
//  2. deny rules of every layer, which apply to Gated and Allow alike;
//  3. ask rules, which send even a profile-allowed requirement to a person;
//  4. allow rules, which meet Gated requirements;
//  5. whatever is left goes to the [Approver] (see package approval); with
//     no Approver the decision is "ask" and the caller asks;
//  6. "always" answers are saved as exact rules in the local layer;
//  7. a grant (package grant) is minted for every Gated requirement that
//     ends allowed, bound to the call's execution, command, directory and
//     profile.
//
// The [Decision] names its effect, the reason, the requirement that
// decided it, the matched rule and its layer, and every requirement's
// step. Each decision is appended to a [Recorder] (the audit log) before
// Decide returns; if that fails the decision is a denial.
//
// What this package does not do: parse tool input (package tool), rule
// syntax and files (package rules), say what a profile allows (package
// profile: the gate asks it and keeps no access table of its own), talk
// to a person (package approval), verify grants or enforce anything
// (packages grant and sandbox).
package gate
