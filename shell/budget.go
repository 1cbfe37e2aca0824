package shell

import (
	"fmt"

	"github.com/airlockhq/airlock/tool"
	"mvdan.cc/sh/v3/syntax"
)

// Bounded cost. The hook and the daemon decide whatever an agent sends,
// so the analysis of one script must cost time and memory linear in its
// size, whatever its shape. Parsing is; what could grow faster is bounded
// here, and what is past a bound is refused with a reason that says so
// (a requirement the gate denies: tool.Requirement.Invalid), never
// guessed at.
const (
	// maxScriptBytes bounds the script analysed: no command a person
	// reads is longer.
	maxScriptBytes = 256 << 10
	// maxNesting bounds how deep the syntax tree of one script may be
	// (each "$(", subshell, block, loop or if is a few levels): the
	// text of a command holds the text of everything nested in it, so
	// that text grows with the square of the depth.
	maxNesting = 400
	// budgetFactor and budgetBase bound the text of all requirements of
	// one script: budgetFactor times its size, plus budgetBase.
	budgetFactor = 16
	budgetBase   = 1 << 20
	// maxRequirements bounds how many requirements one script has.
	maxRequirements = 20000
)

// refusal is the requirement that stands for a script past a bound.
func refusal(src, why string) tool.Requirement {
	shown := src
	if len(shown) > 120 {
		shown = shown[:120] + "…"
	}
	return tool.Requirement{Kind: tool.KindCommandExecute, Target: scrub(shown), Unparsed: true, Invalid: why}
}

// treeDepth returns how deep the syntax tree of f is, stopping once it is
// past limit.
func treeDepth(f *syntax.File, limit int) int {
	depth, most := 0, 0
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			depth--
			return true
		}
		depth++
		if depth > most {
			most = depth
		}
		return most <= limit
	})
	return most
}

// spend charges the walker for a requirement's text; once the budget is
// spent the walker stops adding requirements and the script is refused.
func (w *bashWalker) spend(r tool.Requirement) bool {
	w.spent += len(r.Target) + len(r.Shape) + 64
	if w.spent > w.budget || len(w.reqs) >= maxRequirements {
		w.overBudget = true
		return false
	}
	return true
}

// budgetRefusal says why a script past its analysis budget is refused.
func budgetRefusal(src string) tool.Requirement {
	return refusal(src, fmt.Sprintf("analysing this %d-byte command would cost more than airlock allows for one decision "+
		"(its commands' text over %d bytes or more than %d requirements), so it is refused: split it into smaller commands",
		len(src), budgetFactor*len(src)+budgetBase, maxRequirements))
}
