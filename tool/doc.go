// Package tool turns an agent's tool call into the typed requirements the
// gate decides on.
//
// A [Call] names a tool (Claude Code's vocabulary: Bash, Read, Write, Edit,
// MultiEdit, NotebookEdit, Glob, Grep, WebFetch, WebSearch, mcp__server__tool)
// and carries its JSON input. A preparer derives a list of [Requirement]s
// from it: for Bash and Monitor, whose input is a shell script, package
// shell derives them (command.execute for every command the script runs,
// filesystem.read and filesystem.write for the files it touches,
// network.connect for the hosts it reaches); for the other tools, the
// path, URL or name their input carries (filesystem.read, filesystem.write,
// network.connect, tool.invoke). Package shell registers itself here at
// init ([RegisterShell]), since it builds on this package's types.
//
// Requirements are conservative where the input is not fully known: a
// part only known at run time is kept in [Requirement.Shape] as a [Hole],
// a path relative to a directory nobody can know is marked Unresolved,
// and input the shell parser rejects becomes one Unparsed requirement.
// None of those can be allowed by a rule's literal text. Every
// command.execute carries its canonical form ([CommandForm]), which rules
// compare (docs/RULES.md).
//
// Input is decoded strictly (duplicate or case-variant keys and wrong
// types in the fields the gate reads are refused, other fields are left
// alone: input.go); paths are resolved component by
// component as the kernel resolves them, keeping the names they were
// written as ([Requirement.Names], paths.go); a read or write of a whole
// directory is a [Requirement.Tree]; hosts are normalised
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
