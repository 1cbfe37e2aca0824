// Package store is the daemon's storage: bearer tokens, approvals, the rules
// "always" answers saved, the grant replay ledger, the grant key, the audit
// log and the event feed that drives /v1/events. One interface, two
// implementations: sqlite (embedded, the default, package store/sqlite) and
// postgres (several replicas share one database, package store/postgres).
//
// Every method is safe for concurrent use, and every state change is one
// transaction, so of two replicas answering one approval exactly one wins and
// a grant spent on one replica is refused on every other.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/airlockhq/airlock/audit"
)

// Errors a Store returns; test with errors.Is.
var (
	ErrNotFound = errors.New("not found")
	// ErrAnswered: the approval already has an answer.
	ErrAnswered = errors.New("approval already answered")
	// ErrExpired: the approval expired before the answer came.
	ErrExpired = errors.New("approval expired")
	// ErrCallPending: OpenApproval found the call's earlier approval still
	// pending; join that one (ApprovalForCall) instead.
	ErrCallPending = errors.New("the call already has a pending approval")
	// ErrReplayed: the grant's MAC was already spent (the same condition as
	// grant.ErrReplayed, which implementations wrap too).
	ErrReplayed = errors.New("grant already spent")
)

// Role is what a token may do (docs/API.md, "Roles").
type Role string

const (
	// RoleAgent decides and executes as its one agent, sees only that
	// agent's approvals and never answers.
	RoleAgent Role = "agent"
	// RolePerson answers approvals and reads them and the audit.
	RolePerson Role = "person"
	// RoleOperator is a person who also manages tokens and workspaces.
	RoleOperator Role = "operator"
)

// Token is a bearer token's record. The token text is never stored, only
// its SHA-256.
type Token struct {
	ID        string // short public id, shown in listings and the audit
	Name      string // what the person who created it called it
	Hash      [32]byte
	CreatedAt time.Time

	Role  Role
	Agent string // RoleAgent: the agent it acts as
	User  string // RoleAgent: the user its calls and executions run for
	// Workspaces are the canonical paths the token may act on; none means
	// every registered workspace.
	Workspaces []string
	// ExpiresAt is when the token stops working; zero: never.
	ExpiresAt time.Time
	// RevokedAt is when it was revoked; zero: it was not.
	RevokedAt time.Time
}

// Workspace is a directory an operator registered: the daemon acts only
// on these (or on a token's own workspaces).
type Workspace struct {
	Path    string // canonical: absolute, clean, no symlink in it
	AddedAt time.Time
}

// PendingFilter selects pending approvals; zero fields select everything.
type PendingFilter struct {
	Agent      string   // only this agent's
	Workspaces []string // only these workspaces' (none: every one)
	// After is a cursor: the id of the last approval of the previous page;
	// the page starts after it in (created_at, id) order.
	After string
	Limit int // 0: no limit
}

// State is where an approval is in its life.
type State string

const (
	Pending  State = "pending"
	Answered State = "answered"
	Expired  State = "expired"
)

// Approval is one call waiting for (or given) a person's answer.
type Approval struct {
	ID string
	// CallHash is SHA-256 over the tool, the input and the identity
	// (workspace, agent, session): the answer binds to exactly this call.
	CallHash  string
	Tool      string
	Input     json.RawMessage
	Workspace string
	Agent     string
	Session   string
	// View is what the web page shows, computed once by the server when the
	// approval opens (parsed command, requirements, the rules "always"
	// would save); stored as opaque JSON.
	View json.RawMessage

	State     State
	CreatedAt time.Time
	ExpiresAt time.Time

	// Set when State is Answered or Expired.
	Answer     string        // once|always|deny|always_deny ("deny" on expiry)
	For        time.Duration // for "always" answers limited in time
	AnsweredAt time.Time
	AnsweredBy string // token id, "" on expiry
	// Used is set when the waiting client took the answer; an answer is
	// used once.
	Used bool
}

// Rule is a rule an "always" answer saved, shared by every replica.
type Rule struct {
	Workspace string
	Effect    string // allow|deny
	Text      string // rule syntax, e.g. Bash(git push origin main)
	Expires   time.Time
	CreatedAt time.Time
	Approval  string // the approval that saved it
}

// EventKind names a feed event.
type EventKind string

const (
	EventOpened   EventKind = "opened"
	EventAnswered EventKind = "answered"
	EventExpired  EventKind = "expired"
)

// Event is one entry of the feed /v1/events streams. Seq grows strictly, so
// a replica polls for everything after the last Seq it saw.
type Event struct {
	Seq      int64
	Kind     EventKind
	Approval string
	Time     time.Time
}

// AuditFilter selects audit events; zero fields select everything.
type AuditFilter struct {
	Since    time.Time
	Tool     string
	Decision string
	Limit    int // 0 means the store's default (1000)
}

// Store is everything the daemon keeps.
type Store interface {
	// CreateToken stores t. LookupToken finds a token by the SHA-256 of its
	// text, ErrNotFound when none matches.
	// A revoked or expired token is still found: the caller refuses it.
	CreateToken(ctx context.Context, t Token) error
	LookupToken(ctx context.Context, hash [32]byte) (Token, error)
	// Tokens lists every token, oldest first.
	Tokens(ctx context.Context) ([]Token, error)
	// RevokeToken marks token id revoked at now; ErrNotFound when no token
	// has the id. Revoking twice keeps the first time.
	RevokeToken(ctx context.Context, id string, now time.Time) error

	// AddWorkspace registers w (a second add of one path keeps the first);
	// RemoveWorkspace unregisters it (ErrNotFound when it was not);
	// Workspaces lists them by path; WorkspaceRegistered reports one.
	AddWorkspace(ctx context.Context, w Workspace) error
	RemoveWorkspace(ctx context.Context, path string) error
	Workspaces(ctx context.Context) ([]Workspace, error)
	WorkspaceRegistered(ctx context.Context, path string) (bool, error)

	// OpenApproval stores a new pending approval and appends an
	// EventOpened in the same transaction. It stores nothing and returns
	// ErrCallPending when an approval with the same CallHash is pending
	// and unexpired at a.CreatedAt: of concurrent opens of one call, on
	// any replica, one stores and the others join it, so one answer
	// reaches every client waiting on that call.
	OpenApproval(ctx context.Context, a Approval) error
	// Approval returns one approval, ErrNotFound when the id is unknown.
	Approval(ctx context.Context, id string) (Approval, error)
	// PendingApprovals lists approvals still pending at now, oldest first.
	PendingApprovals(ctx context.Context, now time.Time) ([]Approval, error)
	// PendingPage lists the approvals pending at now that f selects,
	// oldest first, at most f.Limit.
	PendingPage(ctx context.Context, now time.Time, f PendingFilter) ([]Approval, error)
	// CountPending counts the approvals pending at now of agent, and of
	// workspace.
	CountPending(ctx context.Context, now time.Time, agent, workspace string) (byAgent, byWorkspace int, err error)
	// AnswerApproval records an answer if the approval is pending and not
	// expired at now: ErrNotFound, ErrAnswered or ErrExpired otherwise, and
	// nothing changes. It appends an EventAnswered; rules, when not empty,
	// are saved in the same transaction.
	AnswerApproval(ctx context.Context, id, answer string, forDur time.Duration, by string, now time.Time, rules []Rule) (Approval, error)
	// ExpireApprovals turns every approval pending past its ExpiresAt at
	// now into Expired with answer "deny", appending an EventExpired each.
	ExpireApprovals(ctx context.Context, now time.Time) ([]Approval, error)
	// ApprovalForCall returns the newest approval of the call whose
	// CallHash is callHash that is still pending at now, or answered or
	// expired with its answer not yet used; ErrNotFound when there is none.
	// It is how a later decision of the same call finds the answer given
	// for it (then taken with UseAnswer) or the approval already waiting.
	ApprovalForCall(ctx context.Context, callHash string, now time.Time) (Approval, error)
	// UseAnswer marks an answered approval's answer as taken; it returns
	// ErrAnswered if it was taken before (an answer is used once).
	UseAnswer(ctx context.Context, id string) error

	// Rules returns the rules saved for workspace that have not expired
	// at now.
	Rules(ctx context.Context, workspace string, now time.Time) ([]Rule, error)

	// Spend records a grant's MAC as used; ErrReplayed if it was already
	// spent. It has grant.Ledger's contract (see grant.Ledger).
	Spend(ctx context.Context, mac [32]byte, expires time.Time) error
	// GrantKey returns the shared HMAC key for grants, creating it (with
	// fresh random bytes from create) on first use; every replica gets the
	// same key.
	GrantKey(ctx context.Context, create func() ([]byte, error)) ([]byte, error)

	// AppendAudit stores one audit event; it is durable when it returns.
	AppendAudit(ctx context.Context, e audit.Event) error
	// Audit returns events matching f, oldest first.
	Audit(ctx context.Context, f AuditFilter) ([]audit.Event, error)

	// Events returns feed events with Seq > after, oldest first, at most
	// limit (0: all).
	Events(ctx context.Context, after int64, limit int) ([]Event, error)

	Close() error
}
