package server

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/server/store"
	"github.com/airlockhq/airlock/workspace"
)

// policyCache keeps each workspace's loaded policy while the files it came
// from are unchanged, so a decision does not re-read and re-parse every
// rule file. An entry is also dropped after policyMaxAge, for whatever
// the Policy function reads that the stamp does not cover.
type policyCache struct {
	mu    sync.Mutex
	m     map[string]policyEntry
	saved map[string]savedEntry
}

// savedEntry is a workspace's rules from the Store, read at most once per
// poll interval: a rule another replica saved applies here within one
// interval, as its answer does; one this process saved applies at once
// (forget drops the entry).
type savedEntry struct {
	read  time.Time
	rules []store.Rule
}

type policyEntry struct {
	stamp  string
	loaded time.Time
	pol    Policy
}

const policyMaxAge = 2 * time.Second

// policy returns what decides workspace ws's calls: its files' profile and
// rules, plus the rules "always" answers saved in the Store (which every
// replica shares).
func (s *Server) policy(ctx context.Context, ws string) (Policy, error) {
	pol, err := s.filePolicy(ws)
	if err != nil {
		return Policy{}, err
	}
	saved, err := s.savedRules(ctx, ws)
	if err != nil {
		return Policy{}, fmt.Errorf("the rules saved in the database: %w", err)
	}
	if len(saved) == 0 {
		return pol, nil
	}
	base := rules.Base{Root: ws, Cwd: ws, Home: ws}
	var extra []*rules.Rule
	for _, sr := range saved {
		r, err := rules.NewRule(rules.Effect(sr.Effect), sr.Text, rules.Local, base)
		if err != nil {
			// Only exact rules are ever saved; one that does not parse
			// is skipped rather than failing every decision.
			s.log.Warn("a saved rule does not parse", "rule", sr.Text, "err", err)
			continue
		}
		r.Expires, r.Source = sr.Expires, "approval "+sr.Approval
		if sr.Effect == string(rules.Deny) {
			r.Reason = "denied by the user"
		}
		extra = append(extra, r)
	}
	if pol.Rules == nil {
		pol.Rules = rules.NewSet(nil)
	}
	pol.Rules = pol.Rules.With(extra...)
	return pol, nil
}

func (s *Server) filePolicy(ws string) (Policy, error) {
	stamp := policyStamp(ws)
	now := time.Now()
	s.policies.mu.Lock()
	e, ok := s.policies.m[ws]
	s.policies.mu.Unlock()
	if ok && e.stamp == stamp && now.Sub(e.loaded) < policyMaxAge {
		return e.pol, nil
	}
	pol, err := s.cfg.Policy(ws)
	if err != nil {
		return Policy{}, err
	}
	s.policies.mu.Lock()
	if s.policies.m == nil {
		s.policies.m = map[string]policyEntry{}
	}
	if len(s.policies.m) > 1000 {
		clear(s.policies.m)
	}
	s.policies.m[ws] = policyEntry{stamp: stamp, loaded: now, pol: pol}
	s.policies.mu.Unlock()
	return pol, nil
}

// forget drops ws's cached policy (after this process wrote its rules).
func (s *Server) forget(ws string) {
	s.policies.mu.Lock()
	delete(s.policies.m, ws)
	delete(s.policies.saved, ws)
	s.policies.mu.Unlock()
}

func (s *Server) savedRules(ctx context.Context, ws string) ([]store.Rule, error) {
	now := time.Now()
	s.policies.mu.Lock()
	e, ok := s.policies.saved[ws]
	s.policies.mu.Unlock()
	if ok && now.Sub(e.read) < s.cfg.PollInterval {
		return e.rules, nil
	}
	rs, err := s.st.Rules(ctx, ws, s.now())
	if err != nil {
		return nil, err
	}
	s.policies.mu.Lock()
	if s.policies.saved == nil || len(s.policies.saved) > 1000 {
		s.policies.saved = map[string]savedEntry{}
	}
	s.policies.saved[ws] = savedEntry{read: now, rules: rs}
	s.policies.mu.Unlock()
	return rs, nil
}

// policyStamp identifies the state of the files ws's policy is read from
// (workspace.Stamp: every rule file of every layer and the workspace's
// profile file).
func policyStamp(ws string) string {
	return workspace.Stamp(ws, workspace.Overrides{})
}
