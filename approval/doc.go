// Package approval holds the gate's approvers: who answers for a tool call
// that no rule decided.
//
// [Terminal] asks a person at a terminal (approve once, always for this
// workspace, always for an hour, deny, always deny). [Func] lets a Go
// program answer. [Headless] answers no one: the gate turns its refusal
// into a denial that errors.Is recognises as gate.ErrApprovalRequired.
//
// What this package does not do: decide anything by itself, or save rules.
// An approver only returns an answer; package gate saves "always" answers
// as exact rules through package rules. The HTTP queue and webhook
// approvers of DESIGN.md section 2 belong to the server and are not here.
package approval
