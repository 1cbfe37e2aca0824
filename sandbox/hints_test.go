package sandbox_test

import "github.com/airlockhq/airlock/sandbox"

// hintTarget is the target of the records the output hints add when the
// command printed a refusal's message (hints.go): a guess from its words,
// not a refusal the sandbox made.
const hintTarget = "(a path, seen in the command's stderr)"

// enforced is the Result's denials without the output hints' records.
func enforced(res *sandbox.Result) []sandbox.Denial {
	var out []sandbox.Denial
	for _, d := range res.Denials {
		if d.Target != hintTarget {
			out = append(out, d)
		}
	}
	return out
}
