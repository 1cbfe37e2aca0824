package shell

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/airlockhq/airlock/tool"
	"mvdan.cc/sh/v3/syntax"
)

// maxShellDepth bounds how deep "bash -c '...'" and eval strings are parsed
// inside each other; deeper input is treated as unparsed.
const maxShellDepth = 8

// maxDirs bounds how many working directories the walker tracks at once
// (after "cd a; ..." a command runs in a or where it was); past this the
// directory is unknown.
const maxDirs = 4

var parserPool = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

func init() { tool.RegisterShell(Requirements) }

// Requirements derives the requirements of the shell script src run in
// directory dir, with "~" standing for home. It never fails: input the
// parser rejects becomes one Unparsed command.execute requirement.
//
// Its cost is bounded (budget.go): a script over maxScriptBytes, one
// nested deeper than maxNesting and one whose analysis would spend more
// than its budget become one requirement the gate refuses, whose reason
// says so.
func Requirements(src, dir, home string) []tool.Requirement {
	if len(src) > maxScriptBytes {
		return []tool.Requirement{refusal(src, fmt.Sprintf("the command is %d bytes, more than the %d airlock analyses, so it is refused: split it into smaller commands", len(src), maxScriptBytes))}
	}
	w := &bashWalker{home: home, budget: budgetFactor*len(src) + budgetBase, seen: map[reqKey]bool{}}
	w.script(src, dirSet{list: []string{dir}}, "")
	if w.overBudget {
		return []tool.Requirement{budgetRefusal(src)}
	}
	w.resolveData()
	return w.reqs
}

// dirSet is what the walker knows of the working directory: one of a few
// candidates, or unknown.
type dirSet struct {
	list    []string
	unknown bool
}

func (d dirSet) union(o dirSet) dirSet {
	if d.unknown || o.unknown {
		return dirSet{unknown: true}
	}
	out := dirSet{list: slices.Clone(d.list)}
	for _, x := range o.list {
		if !slices.Contains(out.list, x) {
			out.list = append(out.list, x)
		}
	}
	if len(out.list) > maxDirs {
		return dirSet{unknown: true}
	}
	return out
}

func (d dirSet) equal(o dirSet) bool {
	return d.unknown == o.unknown && slices.Equal(d.list, o.list)
}

// flow is the directory state after a command: ok when it succeeded, any
// whatever its status. "a && b" runs b in a's ok state; "a || b" and
// "a; b" run b in a's any state.
type flow struct{ ok, any dirSet }

func same(d dirSet) flow { return flow{d, d} }

type bashWalker struct {
	home  string
	depth int
	// src is the text of the script being walked, for the source text of
	// expansions. Nested scripts (bash -c) swap it while they are walked.
	src string
	// inherited is what a wrapper replaces in the text of a script it runs
	// ("xargs -I% sh -c 'rm %'"), for every command of that script.
	inherited operandSource
	// via names what runs the script being walked when an option or a
	// variable of another command gave it (ssh -o ProxyCommand): its
	// commands carry it in Via.
	via string
	// pending are the programs the command being emitted runs (runLater).
	pending []program
	reqs    []tool.Requirement
	// data is what the call assigns to variables and where it evaluates
	// their values as code (data.go).
	data dataFlow
	// remote names what runs the commands being walked elsewhere (a
	// container, a pod): their paths are not this machine's.
	remote string
	// seen are the requirements added (add keeps one of each).
	seen map[reqKey]bool
	// spent is the text the requirements hold, budget its bound,
	// overBudget set once it is past (budget.go).
	spent, budget int
	overBudget    bool
	// pwdShadowed: some script of the call defines a function or alias
	// named pwd, so "$(pwd)" is not the working directory.
	pwdShadowed bool
}

// reqKey is what makes two requirements the same one for add.
type reqKey struct {
	kind, target, shape  string
	unresolved, unparsed bool
}

func (w *bashWalker) add(r tool.Requirement) {
	k := reqKey{r.Kind, r.Target, r.Shape, r.Unresolved, r.Unparsed}
	if w.seen[k] || w.overBudget || !w.spend(r) {
		return
	}
	w.seen[k] = true
	w.reqs = append(w.reqs, r)
}

// script parses and walks one script. via names what runs it when it is a
// nested script ("bash -c", "eval").
func (w *bashWalker) script(src string, in dirSet, via string) flow {
	if w.depth >= maxShellDepth {
		// Too deep to follow: the commands in it could be any.
		w.data.poisoned = true
		w.dataUnknown(src, via)
		return same(dirSet{unknown: true})
	}
	p := parserPool.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(src), "")
	parserPool.Put(p)
	if err != nil {
		w.unparsed(src, via)
		return same(dirSet{unknown: true})
	}
	if d := treeDepth(f, maxNesting); d > maxNesting {
		w.add(refusal(src, fmt.Sprintf("the command nests more than airlock analyses (its syntax tree is over %d levels deep, about %d \"$(\" inside each other), so it is refused: write it flatter", maxNesting, maxNesting/4)))
		return same(dirSet{unknown: true})
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if fd, ok := n.(*syntax.FuncDecl); ok && fd.Name != nil && fd.Name.Value == "pwd" {
			w.pwdShadowed = true
		}
		return !w.pwdShadowed
	})
	if strings.Contains(src, "alias") && strings.Contains(src, "pwd") {
		w.pwdShadowed = true
	}
	saved := w.src
	w.src = src
	w.depth++
	out := w.stmts(f.Stmts, in)
	w.depth--
	w.src = saved
	return out
}

func (w *bashWalker) unparsed(src, via string) {
	w.add(tool.Requirement{Kind: tool.KindCommandExecute, Target: scrub(src), Unparsed: true, Via: via})
}

// stmts walks a sequence: each statement starts where the previous one
// may have left the directory.
func (w *bashWalker) stmts(list []*syntax.Stmt, in dirSet) flow {
	out := same(in)
	for _, s := range list {
		out = w.stmt(s, out.any)
	}
	return out
}

func (w *bashWalker) stmt(s *syntax.Stmt, in dirSet) flow {
	out := same(in)
	if s.Cmd != nil {
		out = w.command(s.Cmd, in)
	}
	// Redirections open their files before the command runs, in the
	// directory the statement starts in.
	for _, r := range s.Redirs {
		w.redirect(r, in)
	}
	if s.Background || s.Coprocess {
		// An asynchronous command runs in a subshell: it cannot move us.
		return same(in)
	}
	if s.Negated {
		return flow{ok: out.any, any: out.any}
	}
	return out
}

func (w *bashWalker) command(c syntax.Command, in dirSet) flow {
	switch c := c.(type) {
	case *syntax.CallExpr:
		return w.call(c, in)
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.AndStmt:
			x := w.stmt(c.X, in)
			y := w.stmt(c.Y, x.ok)
			return flow{ok: y.ok, any: x.any.union(y.any)}
		case syntax.OrStmt:
			x := w.stmt(c.X, in)
			y := w.stmt(c.Y, x.any)
			return flow{ok: x.ok.union(y.ok), any: x.any.union(y.any)}
		default: // pipes: every side runs in its own subshell
			w.stmt(c.X, in)
			w.stmt(c.Y, in)
			return same(in)
		}
	case *syntax.Subshell:
		w.stmts(c.Stmts, in)
		return same(in)
	case *syntax.Block:
		return w.stmts(c.Stmts, in)
	case *syntax.IfClause:
		return w.ifClause(c, in)
	case *syntax.WhileClause:
		cond := w.stmts(c.Cond, in)
		body := w.stmts(c.Do, cond.ok)
		return w.loopResult(in, cond.any.union(body.any))
	case *syntax.ForClause:
		w.nested(c.Loop, in)
		body := w.stmts(c.Do, in)
		return w.loopResult(in, body.any)
	case *syntax.CaseClause:
		w.nested(c.Word, in)
		out := in
		for _, item := range c.Items {
			for _, p := range item.Patterns {
				w.nested(p, in)
			}
			out = out.union(w.stmts(item.Stmts, in).any)
		}
		return same(out)
	case *syntax.FuncDecl:
		// The body is checked where it is declared: every command it
		// could run needs the same permission wherever it is called.
		w.stmt(c.Body, in)
		return same(in)
	case *syntax.DeclClause:
		w.nested(c, in)
		w.declData(c)
		words := append([]shWord{{pieces: []piece{{text: c.Variant.Value}}}}, w.renderAssigns(c.Args)...)
		w.emit(words, nil, in, w.via, w.inherited)
		return same(in)
	case *syntax.TimeClause:
		if c.Stmt == nil {
			return same(in)
		}
		return w.stmt(c.Stmt, in)
	case *syntax.CoprocClause:
		w.stmt(c.Stmt, in)
		return same(in)
	case *syntax.TestDecl:
		w.stmt(c.Body, in)
		return same(in)
	case *syntax.ArithmCmd, *syntax.TestClause, *syntax.LetClause:
		w.nested(c, in)
		return same(in)
	default:
		// A construct this walker does not know (a newer parser's node,
		// a zsh-only form): find every simple command in it, and treat
		// the directory as unknown.
		unknown := dirSet{unknown: true}
		syntax.Walk(c, func(n syntax.Node) bool {
			if ce, ok := n.(*syntax.CallExpr); ok {
				w.call(ce, unknown)
				return false
			}
			return true
		})
		return same(unknown)
	}
}

func (w *bashWalker) ifClause(c *syntax.IfClause, in dirSet) flow {
	if len(c.Cond) == 0 && c.Else == nil { // a plain "else" branch
		return w.stmts(c.Then, in)
	}
	cond := w.stmts(c.Cond, in)
	then := w.stmts(c.Then, cond.ok)
	other := same(cond.any)
	if c.Else != nil {
		other = w.ifClause(c.Else, cond.any)
	}
	return flow{ok: then.ok.union(other.ok), any: then.any.union(other.any)}
}

// loopResult: a loop body may run any number of times, so a directory
// change inside it makes the directory after it unknown.
func (w *bashWalker) loopResult(in, after dirSet) flow {
	if after.equal(in) {
		return same(in)
	}
	return same(dirSet{unknown: true})
}

// nested walks every command and process substitution inside node (a word,
// an arithmetic or test expression, a declaration) as a subshell.
func (w *bashWalker) nested(node syntax.Node, in dirSet) {
	if node == nil {
		return
	}
	if word, ok := node.(*syntax.Word); ok && word == nil {
		return
	}
	syntax.Walk(node, func(n syntax.Node) bool {
		w.dataNode(n)
		switch n := n.(type) {
		case *syntax.CmdSubst:
			w.stmts(n.Stmts, in)
			return false
		case *syntax.ProcSubst:
			w.stmts(n.Stmts, in)
			return false
		}
		return true
	})
}

// redirect adds the file a redirection reads or writes. Duplications of
// descriptors ("2>&1") and here-documents touch no file, but their words
// are walked for substitutions.
func (w *bashWalker) redirect(r *syntax.Redirect, in dirSet) {
	w.nested(r.Word, in)
	w.nested(r.Hdoc, in)
	if r.Word == nil {
		return
	}
	var kinds []string
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob,
		syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob:
		kinds = []string{tool.KindFilesystemWrite}
	case syntax.RdrIn:
		kinds = []string{tool.KindFilesystemRead}
	case syntax.RdrInOut:
		kinds = []string{tool.KindFilesystemRead, tool.KindFilesystemWrite}
	case syntax.DplOut, syntax.DplIn:
		// ">&file" (without a number or "-") is bash's "&>file".
		if lit := r.Word.Lit(); lit == "-" || isDigits(lit) {
			return
		}
		if r.Op == syntax.DplOut {
			kinds = []string{tool.KindFilesystemWrite}
		} else {
			kinds = []string{tool.KindFilesystemRead}
		}
	default:
		return
	}
	word := w.render(r.Word)
	if w.inherited.replace != "" {
		word = replacePieces(word, w.inherited.replace, w.inherited.with)
	}
	for _, k := range kinds {
		w.pathRequirements(k, word, in, r.Op.String())
	}
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
