package shell

import (
	"strings"

	"github.com/airlockhq/airlock/tool"
	"mvdan.cc/sh/v3/syntax"
)

// Code hidden in data. Bash evaluates some values as code long after the
// parser has seen them: a variable read in arithmetic ("(( x ))", "$((x))",
// "let x", "[[ $x -eq 0 ]]", "test $x -gt 1", an array subscript, a
// substring offset, "declare -i", "shift $x", "printf %d $x"), a name
// that may carry a subscript ("${!x}", "[[ -v $x ]]", "read $x",
// "printf -v $x", "declare -n r=$x") and a prompt ("${x@P}") all expand
// the "$(...)" in "a[$(curl ...)]". So does a script the parser never
// sees: eval or "bash -c" of an expansion, "source", and a nesting deeper
// than maxShellDepth.
//
// The walker records every value assigned to a variable (dataFlow) and
// every place a variable's value is evaluated (dataUse). When the call is
// walked, a use whose variable could hold anything but an inert value
// (digits, names of inert variables, arithmetic operators) becomes an
// unresolved command.execute whose shape is one Hole: no rule allows it,
// and every deny or ask rule for commands matches it, since the command it
// hides could be any.

// dataFlow is what the walker knows of the call's variables.
type dataFlow struct {
	// vars are the values assigned to each variable anywhere in the call.
	vars map[string]*varValues
	// uses are the variables whose values are evaluated as code.
	uses []dataUse
	// ints are the variables declared integer: every value assigned to
	// them is evaluated as arithmetic.
	ints []string
	// assoc are the variables declared associative: their subscripts are
	// strings, not arithmetic.
	assoc map[string]bool
	// poisoned: something assigned variables the parser cannot see
	// (source, a dynamic declare or read name): no variable is known.
	poisoned bool
}

type varValues struct {
	values  []string
	unknown bool
}

type dataUse struct{ name, text, via string }

// maxDataUses bounds what one call records; past it every use is unknown.
const maxDataUses = 4096

// numericParams are the special parameters and shell variables whose value
// is always a number.
var numericParams = table[map[string]bool]{build: func() map[string]bool {
	return map[string]bool{"#": true, "?": true, "$": true, "!": true,
		"RANDOM": true, "SRANDOM": true, "LINENO": true, "SECONDS": true, "EPOCHSECONDS": true,
		"BASHPID": true, "PPID": true, "UID": true, "EUID": true, "OPTIND": true, "HISTCMD": true}
}}

// recordValue notes that name was assigned value.
func (w *bashWalker) recordValue(name, value string) {
	if w.data.vars == nil {
		w.data.vars = map[string]*varValues{}
	}
	v := w.data.vars[name]
	if v == nil {
		v = &varValues{}
		w.data.vars[name] = v
	}
	if len(v.values) >= 64 {
		v.unknown = true
		return
	}
	v.values = append(v.values, value)
}

// recordUnknown notes that name was assigned a value only known at run
// time (read, mapfile, a command substitution).
func (w *bashWalker) recordUnknown(name string) {
	w.recordValue(name, "")
	w.data.vars[name].unknown = true
}

// recordWord notes the value a word assigns to name: its text when
// literal, the variable it copies ("x=$y"), a number ("$#", "$((...))",
// "${#y}"), or unknown.
func (w *bashWalker) recordWord(name string, sw shWord) {
	if t, ok := sw.literal(); ok {
		w.recordValue(name, t)
		return
	}
	if len(sw.pieces) == 1 && sw.pieces[0].expansion {
		switch v, kind := expansionValue(sw.pieces[0].text); kind {
		case expNumber:
			w.recordValue(name, "0")
			return
		case expVar:
			w.recordValue(name, v)
			return
		}
	}
	w.recordUnknown(name)
}

// recordAssign notes what an assignment ("x=v", "a[i]=v", "a=(v w)")
// assigns.
func (w *bashWalker) recordAssign(a *syntax.Assign) {
	if a.Name == nil {
		return
	}
	name := a.Name.Value
	switch {
	case a.Array != nil:
		for _, e := range a.Array.Elems {
			if e.Value != nil {
				w.recordWord(name, w.render(e.Value))
			}
		}
	case a.Value != nil:
		w.recordWord(name, w.render(a.Value))
	default:
		w.recordValue(name, "")
	}
}

type expKind uint8

const (
	expOther  expKind = iota
	expNumber         // always a number
	expVar            // the value of the variable returned
)

// expansionValue classifies the source text of an expansion.
func expansionValue(text string) (string, expKind) {
	switch {
	case text == "$#" || text == "$?" || text == "$$" || text == "$!",
		strings.HasPrefix(text, "$((") || strings.HasPrefix(text, "$[") || strings.HasPrefix(text, "${#"):
		return "", expNumber
	case strings.HasPrefix(text, "${") && strings.HasSuffix(text, "}"):
		name := text[2 : len(text)-1]
		if i := strings.IndexByte(name, '['); i > 0 && strings.HasSuffix(name, "]") {
			name = name[:i] // an element: its subscript is checked where it is
		}
		if isName(name) {
			return name, expVar
		}
	case strings.HasPrefix(text, "$") && isName(text[1:]):
		return text[1:], expVar
	}
	return "", expOther
}

func isName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// useVar notes that the value of name is evaluated as code at text.
func (w *bashWalker) useVar(name, text, via string) {
	if numericParams.get()[name] && w.data.vars[name] == nil {
		return
	}
	if len(w.data.uses) >= maxDataUses {
		w.dataUnknown(text, via)
		return
	}
	w.data.uses = append(w.data.uses, dataUse{name: name, text: text, via: via})
}

// dataUnknown adds a command that only a value known at run time says.
func (w *bashWalker) dataUnknown(text, via string) {
	text = scrub(text)
	w.add(tool.Requirement{Kind: tool.KindCommandExecute, Target: text, Argv: []string{text},
		Shape: string(tool.Hole), Unresolved: true, Via: via})
}

// resolveData turns every use of a variable that may hold code into an
// unresolved command. It runs once the whole call is walked, so that an
// assignment anywhere (a loop, a function, an eval) counts.
func (w *bashWalker) resolveData() {
	for _, name := range w.data.ints {
		w.useVar(name, name, "declare -i")
	}
	for _, u := range w.data.uses {
		if !w.inert(u.name, 0) {
			w.dataUnknown(u.text, u.via)
		}
	}
}

// inert reports whether every value name may hold is inert when evaluated
// as arithmetic, as a name or as a prompt.
func (w *bashWalker) inert(name string, depth int) bool {
	v := w.data.vars[name]
	switch {
	case v == nil:
		return numericParams.get()[name]
	case w.data.poisoned || v.unknown || depth > 8:
		return false
	}
	for _, value := range v.values {
		if !w.inertValue(value, depth+1) {
			return false
		}
	}
	return true
}

// inertValue reports whether an arithmetic expression evaluates no code:
// numbers, operators and inert variables only. A subscript, a quote, an
// expansion or a backslash is not inert.
func (w *bashWalker) inertValue(s string, depth int) bool {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(s) && (s[j] == '_' || isAlnum(s[j])) {
				j++
			}
			if !w.inert(s[i:j], depth) {
				return false
			}
			i = j
		case c >= '0' && c <= '9':
			for i < len(s) && (isAlnum(s[i]) || s[i] == '#' || s[i] == '_' || s[i] == '@') {
				i++ // 42, 0x2a, 16#2a
			}
		case strings.IndexByte(" \t\n+-*/%<>=!&|^~?:,().", c) >= 0:
			i++
		default:
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// arithText notes the uses of an arithmetic expression's literal text:
// every name in it is a variable whose value is evaluated. Text that
// holds an expansion character is unknown.
func (w *bashWalker) arithText(s, text, via string) {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '$' || c == '`' || c == '\\' || c == '"' || c == '\'':
			w.dataUnknown(text, via)
			return
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(s) && (s[j] == '_' || isAlnum(s[j])) {
				j++
			}
			w.useVar(s[i:j], text, via)
			i = j
		case c >= '0' && c <= '9':
			for i < len(s) && (isAlnum(s[i]) || s[i] == '#' || s[i] == '_' || s[i] == '@') {
				i++
			}
		default:
			i++
		}
	}
}

// arithWord notes the uses of a word bash evaluates as arithmetic (an
// operand of -eq, a builtin's number): its literal text, and the values
// of its expansions.
func (w *bashWalker) arithWord(sw shWord, via string) {
	text := sw.text()
	for _, p := range sw.pieces {
		if !p.expansion {
			w.arithText(p.text, text, via)
			continue
		}
		switch v, kind := expansionValue(p.text); kind {
		case expNumber:
		case expVar:
			w.useVar(v, text, via)
		default:
			w.dataUnknown(text, via)
			return
		}
	}
}

// nameWord notes the uses of a word bash reads as a variable name (read
// NAME, printf -v NAME, [[ -v NAME ]]): a subscript in it is arithmetic,
// and a name only known at run time may carry one.
func (w *bashWalker) nameWord(sw shWord, via string) {
	t, ok := sw.literal()
	if !ok {
		if len(sw.pieces) == 1 && sw.pieces[0].expansion {
			if v, kind := expansionValue(sw.pieces[0].text); kind == expVar {
				w.useVar(v, sw.text(), via)
				return
			}
		}
		w.dataUnknown(sw.text(), via)
		return
	}
	if i := strings.IndexByte(t, '['); i >= 0 {
		w.arithText(t[i:], t, via)
	}
}

// assignedName is the variable a name word assigns ("a[1]" assigns a).
func assignedName(sw shWord) (string, bool) {
	t, ok := sw.literal()
	if !ok {
		return "", false
	}
	if i := strings.IndexByte(t, '['); i >= 0 {
		t = t[:i]
	}
	return t, isName(t)
}

// dataNode notes what one node of the syntax tree evaluates.
func (w *bashWalker) dataNode(n syntax.Node) {
	switch n := n.(type) {
	case *syntax.ArithmExp:
		w.arith(n.X, "arithmetic")
	case *syntax.ArithmCmd:
		w.arith(n.X, "arithmetic")
	case *syntax.LetClause:
		for _, x := range n.Exprs {
			w.arith(x, "let")
		}
	case *syntax.CStyleLoop:
		w.arith(n.Init, "arithmetic")
		w.arith(n.Cond, "arithmetic")
		w.arith(n.Post, "arithmetic")
	case *syntax.WordIter:
		if n.Name == nil {
			return
		}
		if !n.InPos.IsValid() {
			w.recordUnknown(n.Name.Value) // "for x; do": the positional parameters
		}
		for _, item := range n.Items {
			w.recordWord(n.Name.Value, w.render(item))
		}
	case *syntax.Assign:
		if n.Name != nil && w.data.assoc[n.Name.Value] {
			return
		}
		w.arith(n.Index, "array subscript")
		if n.Array != nil {
			for _, e := range n.Array.Elems {
				w.arith(e.Index, "array subscript")
			}
		}
	case *syntax.ParamExp:
		w.paramExp(n)
	case *syntax.BinaryTest:
		switch n.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			for _, x := range []syntax.TestExpr{n.X, n.Y} {
				if word, ok := x.(*syntax.Word); ok {
					w.arithWord(w.render(word), "[[ "+n.Op.String()+" ]]")
				}
			}
		}
	case *syntax.UnaryTest:
		if word, ok := n.X.(*syntax.Word); ok && n.Op == syntax.TsVarSet {
			w.nameWord(w.render(word), "[[ -v ]]")
		}
	}
}

// paramExp notes what a parameter expansion evaluates: the name an
// indirection reads, a prompt expansion, a subscript, a substring offset.
func (w *bashWalker) paramExp(p *syntax.ParamExp) {
	if p.Param == nil {
		return
	}
	text := w.source(p)
	whole := p.Index != nil && isAllIndex(p.Index)
	if p.Excl && p.Names == 0 && !whole {
		w.useVar(p.Param.Value, text, "indirection")
	}
	if p.Exp != nil && p.Exp.Op == syntax.OtherParamOps && p.Exp.Word != nil &&
		strings.ContainsAny(p.Exp.Word.Lit(), "P") {
		w.useVar(p.Param.Value, text, "prompt expansion")
	}
	if p.Index != nil && !whole && !w.data.assoc[p.Param.Value] {
		w.arith(p.Index, "array subscript")
	}
	if p.Slice != nil {
		w.arith(p.Slice.Offset, "substring")
		w.arith(p.Slice.Length, "substring")
	}
}

// isAllIndex reports whether a subscript is "@" or "*".
func isAllIndex(x syntax.ArithmExpr) bool {
	word, ok := x.(*syntax.Word)
	if !ok {
		return false
	}
	l := word.Lit()
	return l == "@" || l == "*"
}

// arith notes the uses of an arithmetic expression: every variable it
// reads, every expansion whose text it evaluates. Subscripts and nested
// expansions are their own nodes, seen by dataNode.
func (w *bashWalker) arith(x syntax.ArithmExpr, via string) {
	switch x := x.(type) {
	case nil:
	case *syntax.Word:
		if x == nil {
			return
		}
		text := w.source(x)
		for _, part := range x.Parts {
			switch p := part.(type) {
			case *syntax.Lit:
				w.arithText(p.Value, text, via)
			case *syntax.ParamExp:
				w.arithParam(p, text, via)
			case *syntax.ArithmExp:
			case *syntax.DblQuoted:
				w.arithWord(w.render(&syntax.Word{Parts: []syntax.WordPart{p}}), via)
			default:
				w.dataUnknown(text, via)
			}
		}
	case *syntax.BinaryArithm:
		if x.Op >= syntax.Assgn && x.Op <= syntax.ShrAssgn || x.Op == syntax.AndBoolAssgn {
			if name, ok := arithTarget(x.X); ok {
				w.recordValue(name, "0") // arithmetic assigns a number
				if x.Op != syntax.Assgn {
					w.useVar(name, w.source(x), via)
				}
				w.arith(x.Y, via)
				return
			}
		}
		w.arith(x.X, via)
		w.arith(x.Y, via)
	case *syntax.UnaryArithm:
		if x.Op == syntax.Inc || x.Op == syntax.Dec {
			if name, ok := arithTarget(x.X); ok {
				w.recordValue(name, "0")
				w.useVar(name, w.source(x), via)
				return
			}
		}
		w.arith(x.X, via)
	case *syntax.ParenArithm:
		w.arith(x.X, via)
	default:
		w.dataUnknown(w.source(x), via)
	}
}

// arithTarget is the variable an arithmetic assignment assigns.
func arithTarget(x syntax.ArithmExpr) (string, bool) {
	word, ok := x.(*syntax.Word)
	if !ok || word == nil || len(word.Parts) != 1 {
		return "", false
	}
	switch p := word.Parts[0].(type) {
	case *syntax.Lit:
		return p.Value, isName(p.Value)
	case *syntax.ParamExp:
		if p.Param != nil && p.Index != nil { // a[i] = ...: the subscript is its own node
			return p.Param.Value, true
		}
	}
	return "", false
}

// arithParam notes a parameter expansion inside arithmetic: its value is
// evaluated as an expression.
func (w *bashWalker) arithParam(p *syntax.ParamExp, text, via string) {
	switch {
	case p.Length || p.Param == nil:
	case p.Exp != nil || p.Repl != nil || p.Slice != nil || p.Excl || p.Names != 0:
		w.dataUnknown(text, via)
	default:
		w.useVar(p.Param.Value, text, via)
	}
}

// declData notes what declare, local, export, readonly and typeset assign
// and evaluate: "-i" makes every value of a name arithmetic, "-n" makes a
// name refer to another, a name only known at run time may be anything.
func (w *bashWalker) declData(c *syntax.DeclClause) {
	integer, ref, assoc := false, c.Variant.Value == "nameref", false
	for _, a := range c.Args {
		if !a.Naked || a.Value == nil {
			continue
		}
		if t, ok := w.render(a.Value).literal(); ok && (strings.HasPrefix(t, "-") || strings.HasPrefix(t, "+")) {
			integer = integer || strings.Contains(t[1:], "i") && t[0] == '-'
			ref = ref || strings.Contains(t[1:], "n") && t[0] == '-'
			assoc = assoc || strings.Contains(t[1:], "A") && t[0] == '-'
		}
	}
	if assoc {
		for _, a := range c.Args {
			if a.Name != nil {
				if w.data.assoc == nil {
					w.data.assoc = map[string]bool{}
				}
				w.data.assoc[a.Name.Value] = true
			}
		}
	}
	for _, a := range c.Args {
		switch {
		case a.Naked && a.Name != nil:
			if integer {
				w.data.ints = append(w.data.ints, a.Name.Value)
			}
		case a.Naked && a.Value != nil:
			sw := w.render(a.Value)
			if t, ok := sw.literal(); ok {
				if !strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "+") {
					w.nameWord(sw, c.Variant.Value)
				}
				continue
			}
			// "declare $x": the name, a subscript or a whole assignment.
			w.data.poisoned = true
			w.dataUnknown(sw.text(), c.Variant.Value)
		case a.Name != nil:
			w.recordAssign(a)
			if integer {
				w.data.ints = append(w.data.ints, a.Name.Value)
			}
			if ref && a.Value != nil {
				// The name now stands for another: what is assigned to it
				// goes there, and reading it reads that name.
				if target, ok := assignedName(w.render(a.Value)); ok {
					w.recordUnknown(target)
				} else {
					w.data.poisoned = true
				}
				w.nameWord(w.render(a.Value), "declare -n")
			}
		}
	}
}
