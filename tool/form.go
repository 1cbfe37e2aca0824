package tool

// CommandForm is a simple command in the form rules compare: the program,
// the subcommand of a program that has them, the flags as a set, and the
// rest in order. See docs/RULES.md.
type CommandForm struct {
	// Name is the program: a path in a system directory is its last
	// element ("/usr/bin/git" is "git"); any other path stays as written,
	// since "./git" is another program (deny and ask rules still compare
	// its last element).
	Name string
	// Words are the subcommand of a program known to have them, after
	// the global options that do not change which action runs ("git -C
	// d --no-pager push" has ["push"]), under its canonical name ("git
	// send-pack" is "push", "npm t" is "test").
	Words []string
	// Global are git's global options that choose where the action runs
	// ("-C /repo/a", "--git-dir=/x", "-c k=v"), as written, in order. The
	// action is the same without them, so a rule that does not name them
	// matches whatever they are; a rule that names them (the exact rule
	// an "always" answer saves for "git -C /repo/a push") matches only a
	// command with the same ones.
	Global []string
	// Flags are the options that take no argument, for programs whose
	// options are known, each once and sorted, under their short name
	// when they have one ("--recursive" is "-r", "-R" is "-r").
	Flags []string
	// Rest is every other word in order (options with their argument
	// written "-o VALUE", operands), as match text: what is only known at
	// run time is a Hole.
	Rest []string
	// Open: a word where options may be is only known at run time, so
	// the command may have any flag.
	Open bool
}
