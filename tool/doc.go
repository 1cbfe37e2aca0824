// Package tool turns an agent's tool call into the typed requirements the
// gate decides on.
//
// A [Call] names a tool (Claude Code's vocabulary: Bash, Read, Write, Edit,
// MultiEdit, NotebookEdit, Glob, Grep, WebFetch, WebSearch, mcp__server__tool)
// and carries its JSON input. A preparer derives a list of [Requirement]s
// from it: command.execute for every simple command a Bash input would run
// (split by a real shell parser, mvdan.cc/sh/v3, across &&, ||, ;, pipes,
// subshells, command and process substitution, function bodies, the
// commands that wrappers such as sudo, env, xargs, find -exec and bash -c
// run, and those that options and variables name, such as ssh -o
// ProxyCommand, git -c core.sshCommand, GIT_SSH_COMMAND, tar
// --to-command, nc -e and sed's e), filesystem.read and filesystem.write
// for the files a call touches (shell redirections, the operands of common
// file-reading commands, and every path a command such as rm, mv, cp, ln,
// chmod, dd, tar, sed -i, curl -o or git clone creates, changes or
// deletes), network.connect for
// the host:port a URL or a command such as curl, wget, git, ssh, scp,
// rsync or nc connects to, and tool.invoke for MCP tools and other named
// tools. Operands a wrapper supplies at run time (xargs' input, find's
// "{}") are holes, not omissions.
//
// Requirements are conservative where the input is not fully known: a word
// with a shell expansion is kept in [Requirement.Shape] as a [Hole], a path
// relative to a directory the parser cannot know is marked Unresolved, and
// input the parser rejects becomes one Unparsed requirement. None of those
// can be allowed by a rule's literal text. A value bash itself evaluates
// as code (a variable in arithmetic or a subscript, "${!x}", "${x@P}",
// eval or "bash -c" of an expansion, source) is an unresolved command
// whose shape is one Hole, unless the call only assigned it inert values.
// Every command.execute carries its canonical form ([CommandForm]: the
// program without a system directory, git's and npm's subcommand without
// global options, flags as a set), which rules compare (docs/RULES.md).
//
// Input is decoded strictly (duplicate or case-variant keys and wrong
// types in the fields the gate reads are refused, other fields are left
// alone: input.go); paths are resolved component by
// component as the kernel resolves them, keeping the names they were
// written as ([Requirement.Names], paths.go); a read or write of a whole
// directory is a [Requirement.Tree] (bash_trees.go); hosts are normalised
// as a WHATWG URL parser does (host.go). docs/PATHS-AND-HOSTS.md says why.
//
// What this package does not do: decide anything (package gate), know any
// rule syntax (package rules) or enforce anything (package sandbox). Unknown
// tools are an error ([ErrUnknownTool]), which the gate turns into a denial;
// the entry points that decide Claude Code's calls (its hook, POST
// /v1/decide) classify each tool by what it does instead ([ClaudeCode]) and
// prepare every tool that is not gated as one tool.invoke of its name
// ([ClaudeCodePreparers]), so that a tool is never refused for being new.
package tool
