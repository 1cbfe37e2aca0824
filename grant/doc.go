// Package grant binds one approval to one execution with a single-use token.
//
// When the gate approves a gated requirement it calls [Issuer.Issue] with a
// [Binding]: the execution id, the exact argv or shell command, the working
// directory, the profile fingerprint, the requirement kind and target. The
// [Token] it gets back is an HMAC-SHA256 over a length-prefixed encoding of
// that Binding, an expiry and a random nonce. Just before anything runs, the
// executor calls [Issuer.Redeem] with what it is about to run; Redeem checks,
// in this order, the MAC, the expiry and every bound field, and only then
// spends the token in a [Ledger] keyed on its MAC, so a token authorises at
// most one execution and only the one it was issued for.
//
// # Expiry and clocks
//
// A token carries its expiry as wall-clock time so that another process
// holding the same key can check it. Within one process the Issuer also keeps
// the monotonic deadline of every token it issued (time.Now().Add(ttl)), and
// Redeem uses that reading for those tokens, so setting the system clock back
// or forward does not lengthen or shorten their life. Tokens issued by another
// process fall back to the wall clock.
//
// # Secrecy
//
// A token is a bearer credential for one execution. [Token] redacts itself in
// fmt, encoding/json, encoding (text) and log/slog output, and [Redact] removes
// token text from any string, so that tokens never reach the audit log or a
// journal. Use string(tok) only where the token is handed to its redeemer.
//
// # Across processes
//
// [OpenDir] gives processes of one user a shared Issuer: the key in a file
// created once, atomically, mode 0600 ([LoadKeyFile]), and a [FileLedger]
// that serialises spends with flock(2). That is how a token a Claude Code
// hook issues is redeemed by the "airlock run" it rewrote the command into.
//
// What this package does not do: decide whether anything should be approved
// (package gate), re-check profile access or resolve paths and symlinks (the
// sandbox executor does that itself, so a buggy gate cannot mint authority),
// or share a ledger between machines (supply a [Ledger] backed by a database
// for that).
package grant
