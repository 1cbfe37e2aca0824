package provider

import (
	"context"
	"errors"
	"fmt"
)

// Classes of error; every error of this package and its providers wraps
// one of them, so callers branch with errors.Is.
var (
	// ErrConfig: the catalog is malformed or asks for something its
	// provider cannot enforce. Nothing was started.
	ErrConfig = errors.New("sandbox catalog invalid")
	// ErrNotAssigned: the agent was not assigned that sandbox name.
	ErrNotAssigned = errors.New("sandbox not assigned")
	// ErrUnavailable: the handle's invocation ended or was revoked, the
	// catalog was closed, or the provider cannot run anything now.
	ErrUnavailable = errors.New("sandbox unavailable")
	// ErrInvalidRequest: the request itself is wrong (no code, a bad
	// file name, a wider network than the sandbox's).
	ErrInvalidRequest = errors.New("invalid request")
	// ErrProvider: the provider failed to produce a Result (a daemon
	// error, a failed container create). The message is sanitized.
	ErrProvider = errors.New("provider failed")
)

// Error is a typed error with the detail callers branch on. Its message
// never holds a secret or a daemon's raw text.
type Error struct {
	Class   error  // one of the Err* sentinels
	Sandbox string // the sandbox name, when known
	Op      string // what was being done: "load", "create container", ...
	Msg     string // what happened and what to do
}

func (e *Error) Error() string {
	s := e.Class.Error()
	if e.Sandbox != "" {
		s += " (" + e.Sandbox + ")"
	}
	if e.Op != "" {
		s += ": " + e.Op
	}
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	return s
}

// Unwrap returns the class.
func (e *Error) Unwrap() error { return e.Class }

// Errorf makes an *Error of class with a formatted message.
func Errorf(class error, sandbox, op, format string, args ...any) *Error {
	return &Error{Class: class, Sandbox: sandbox, Op: op, Msg: fmt.Sprintf(format, args...)}
}

// Sanitize turns a provider-internal error into a typed one the caller
// may see: context errors keep their meaning, anything already typed is
// kept, and any other text (a daemon's message can carry paths, image
// names, environment values) is replaced by hint.
func Sanitize(sandbox, op string, err error, hint string) error {
	if err == nil {
		return nil
	}
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return &Error{Class: ErrUnavailable, Sandbox: sandbox, Op: op, Msg: "the deadline passed or the call was cancelled"}
	}
	return &Error{Class: ErrProvider, Sandbox: sandbox, Op: op, Msg: hint}
}
