package tool

import (
	"errors"
	"fmt"
)

// The command of a Bash or Monitor call is a shell script, which package
// shell analyses. That package builds on this one's types, so this one
// cannot import it: it registers itself at init, as image/png does with
// package image. Package rules, which compares commands in the shell's
// canonical form, imports it, so whatever reads rules (the gate) has it.
var shellScript func(src, dir, home string) []Requirement

// RegisterShell sets the analysis of shell scripts: the requirements of
// script src run in directory dir, with "~" standing for home. Package
// shell calls it at init.
func RegisterShell(f func(src, dir, home string) []Requirement) { shellScript = f }

// errNoShell is why a script cannot be prepared in a program that does not
// link package shell in.
var errNoShell = errors.New("tool: no shell analysis is linked in (import github.com/airlockhq/airlock/shell), so no shell command can be prepared")

// scriptRequirements derives the requirements of a shell script.
func scriptRequirements(src, dir, home string) ([]Requirement, error) {
	if shellScript == nil {
		return nil, errNoShell
	}
	return shellScript(src, dir, home), nil
}

// prepareBash derives the requirements of a Bash call's "command".
func prepareBash(call Call) ([]Requirement, error) {
	var in struct {
		Command *string `json:"command"`
	}
	if err := decodeInput(call, &in); err != nil {
		return nil, err
	}
	if in.Command == nil {
		return nil, fmt.Errorf("%w: Bash needs a \"command\" string", ErrInvalidInput)
	}
	return scriptRequirements(*in.Command, callDir(call), callHome(call))
}
