// Package rules owns airlock's rule syntax, rule files and their matching.
//
// A rule has an effect (allow, ask, deny) and a match in Claude Code's
// syntax, so existing settings carry over:
//
//	Bash                     every command
//	Bash(npm run test *)     "*" is any text; a trailing " *" may be empty
//	Bash(git log:*)          legacy prefix: "git log" alone or followed by words
//	Bash(ls)                 exactly "ls"
//	Read(./src/**)           paths: "**" any depth, "*" and "?" within a name
//	Read(.env)               no slash: that name at any depth (as .gitignore)
//	Read(~/x)  Read(//abs)   from the home directory; from the filesystem root
//	Edit(/x)                 relative to the rule file's root (see Base)
//	Edit(...) Write(...)     writes (MultiEdit, NotebookEdit too)
//	Glob  Grep               that tool's reads only
//	WebFetch(domain:x.com)   connections to x.com, any port ("*.x.com" for subdomains)
//	Net(host:port)  Net(*.example.com:443)  Net(host)   airlock's network rules
//	mcp__server__tool  mcp__server  mcp__server__*      MCP tools
//	mcp__server__tool(path:/tmp/*)  an MCP tool whose argument "path" matches (mcpargs.go)
//
// Rules match tool.Requirements, not tool names: a Read deny also stops
// the filesystem.read a Bash "cat" of the same file needs, and an Edit
// rule covers a shell redirection. Allow rules match strictly (a part of a
// command only known at run time matches only a wildcard; unparsed input
// and unresolved paths never match); deny and ask rules match
// conservatively (that part may be anything).
//
// A Bash rule names an action, not a string: its literal leading words
// are put in the canonical form commands have (tool.CommandForm: the
// program without a system directory, git's and npm's subcommand without
// global options, flags as a set), so Bash(rm -rf:*) matches rm -fr, rm
// -r -f, rm --recursive --force and /bin/rm -Rfv. Deny and ask rules match
// a command's written text or its canonical form; allow rules only its
// canonical form. docs/RULES.md describes the normalisation.
//
// Rule files are TOML:
//
//	[[rule]]
//	effect  = "deny"                  # allow | ask | deny
//	match   = "Bash(git push *)"
//	reason  = "pushes go through CI"  # shown on deny
//	expires = 2027-01-01T00:00:00Z    # optional; expired rules do not apply
//	  [[rule.example]]                # optional inline tests (airlock policy test)
//	  input  = "git push origin main" # the tool's JSON, or its main field
//	  expect = "deny"
//
// in four layers, strongest first: managed (/etc/airlock/policy.toml; "/x"
// is absolute there), user (~/.config/airlock/policy.toml; "/x" is in the
// home directory), workspace (.airlock/policy.toml) and local
// (.airlock/policy.local.toml, where "always" answers go); "/x" is in the
// workspace for both. Claude Code's .claude/settings.json (workspace layer)
// and .claude/settings.local.json (local layer) permission lists are read
// too. Any deny wins over every ask and allow whatever the layers; the
// layer only decides which matching rule a decision names.
//
// A [Set] indexes rules (commands by a trie of their literal leading words,
// paths by the directory they start in, hosts and tools by name) so a
// decision looks at a handful of rules out of thousands. [Writer] appends
// rules to a file under a lock, atomically and durably, and [ExactMatch]
// gives the narrowest rule for a requirement, which is all an "always"
// answer may save.
//
// What this package does not do: derive requirements (package tool),
// combine rules with the profile and approvers into a decision (package
// gate), or ask anyone (package approval).
package rules
