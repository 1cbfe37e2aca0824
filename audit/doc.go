// Package audit owns airlock's append-only event log: one JSON object per
// line (JSONL), in a file that any number of goroutines and processes append
// to at once.
//
// An [Event] records what the gate decided (with the matched rule and layer),
// what was spawned (with the profile fingerprint), what the sandbox or the
// egress layer enforced, and how the execution exited. [Log.Append] returns
// nil only once the line is on disk: it writes the whole line with one
// write(2) on an O_APPEND descriptor, under flock(2) so that lines longer than
// PIPE_BUF cannot interleave either, and then calls fsync(2).
//
// [Read] and [Follow] parse the log back. A process killed mid-write can
// leave a torn last line; readers tolerate it (see [Read] for exactly how),
// and the next Append ends such a line before writing its own, so a torn
// line never swallows a later event.
//
// Grant tokens are bearer credentials and must never reach the log: Append
// redacts the text of any grant token anywhere in the event, including a
// [grant.Token] or its string form placed in Detail.
//
// What this package does not do: decide anything (package gate), keep the
// log in SQL (the server does), rotate or prune the file, or guarantee that
// a reader sees a line before Append has returned.
package audit
