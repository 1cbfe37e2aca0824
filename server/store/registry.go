package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Opener opens a Store from a DSN of its scheme.
type Opener func(ctx context.Context, dsn string) (Store, error)

var (
	regMu   sync.Mutex
	openers = map[string]Opener{}
)

// Register makes Open hand DSNs of scheme ("sqlite", "postgres") to open.
// Implementations register themselves in an init function, so a program
// chooses the stores it supports by importing them.
func Register(scheme string, open Opener) {
	regMu.Lock()
	defer regMu.Unlock()
	openers[scheme] = open
}

// Scheme returns the scheme of dsn: "sqlite" for sqlite:PATH, "postgres"
// for postgres:// and postgresql:// URLs.
func Scheme(dsn string) string {
	scheme, _, ok := strings.Cut(dsn, ":")
	if !ok {
		return ""
	}
	if scheme == "postgresql" {
		return "postgres"
	}
	return scheme
}

// Open opens the Store dsn names: sqlite:PATH or postgres://...
func Open(ctx context.Context, dsn string) (Store, error) {
	scheme := Scheme(dsn)
	regMu.Lock()
	open := openers[scheme]
	var known []string
	for s := range openers {
		known = append(known, s)
	}
	regMu.Unlock()
	sort.Strings(known)
	if open == nil {
		if scheme == "postgres" {
			return nil, fmt.Errorf("store: this airlock was built without PostgreSQL support; use --db sqlite:PATH")
		}
		return nil, fmt.Errorf("store: the database scheme %q is not one this airlock knows; write sqlite:PATH or postgres://USER@HOST/DB (known: %s)", scheme, strings.Join(known, ", "))
	}
	return open(ctx, dsn)
}
