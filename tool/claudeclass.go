package tool

import (
	"sort"
	"sync"
)

// The classes of Claude Code's tools: one table that every entry point
// deciding Claude Code's calls reads (the PreToolUse hook in
// integrations/claudecode, POST /v1/decide in package server), so a tool
// is decided alike wherever its call arrives.

// ToolClass says how a Claude Code tool is decided: by what it does.
type ToolClass int

const (
	// ClassUnknown is a tool this version of airlock has no entry for. It
	// is left to a person ("ask"): never denied for being new, never
	// allowed unseen. A deny or ask rule naming it decides it everywhere;
	// an allow rule naming it allows it on /v1/decide (where a person's
	// "always" answer saves one), while the hook still asks.
	ClassUnknown ToolClass = iota
	// ClassGated tools have effects this package derives (files,
	// commands, hosts, MCP servers); the gate decides them requirement by
	// requirement.
	ClassGated
	// ClassOrchestration tools steer the agent itself: subagents,
	// questions, plan mode, todos, skills, task control. They touch
	// nothing the sandbox guards, so airlock raises no objection and the
	// agent's own permissions apply, unless a rule naming the tool
	// decides it.
	ClassOrchestration
	// ClassOpaque tools have effects airlock cannot derive from their
	// input (a git worktree created, a script run remotely, a file
	// published). They are asked about unless a rule naming the tool
	// decides.
	ClassOpaque
)

func (c ToolClass) String() string {
	switch c {
	case ClassGated:
		return "gated"
	case ClassOrchestration:
		return "orchestration"
	case ClassOpaque:
		return "opaque"
	}
	return "unknown"
}

// ClaudeCodeTool is what airlock knows of one Claude Code tool.
type ClaudeCodeTool struct {
	Class ToolClass
	// ReadOnly tools change nothing (Claude Code's own read-only tools:
	// Read, Glob, Grep, WebFetch, ...): they may be allowed in plan mode.
	ReadOnly bool
	// Edit tools change one file of the workspace: acceptEdits allows
	// them there.
	Edit bool
	// Shell tools run their "command" field through a shell, which the
	// sandbox rewrite can wrap.
	Shell bool
}

// claudeCodeTools are the tools of Claude Code and the Claude Agent SDK
// as the SDK publishes them (BUILTIN_TOOL_NAMES and sdk-tools.d.ts of the
// version pinned in integrations/claudecode/testdata/sdk;
// TestToolsMatchPublishedTypes there fails when it names one that is not
// here), plus the names older releases used. Built at first use: a map
// this size built at init is paid by every airlock start (TestLazyInits).
var claudeCodeTools = sync.OnceValue(func() map[string]ClaudeCodeTool {
	return map[string]ClaudeCodeTool{
		// Files, commands, the network and MCP servers: the gate decides.
		"Bash":                   {Class: ClassGated, Shell: true},
		"Monitor":                {Class: ClassGated, Shell: true},
		"PowerShell":             {Class: ClassGated},
		"Read":                   {Class: ClassGated, ReadOnly: true},
		"Glob":                   {Class: ClassGated, ReadOnly: true},
		"Grep":                   {Class: ClassGated, ReadOnly: true},
		"WebFetch":               {Class: ClassGated, ReadOnly: true},
		"WebSearch":              {Class: ClassGated, ReadOnly: true},
		"ListMcpResourcesTool":   {Class: ClassGated, ReadOnly: true},
		"ReadMcpResourceTool":    {Class: ClassGated, ReadOnly: true},
		"ReadMcpResourceDirTool": {Class: ClassGated, ReadOnly: true},
		"Write":                  {Class: ClassGated, Edit: true},
		"Edit":                   {Class: ClassGated, Edit: true},
		"NotebookEdit":           {Class: ClassGated, Edit: true},
		// Names of earlier releases, still answered.
		"MultiEdit":    {Class: ClassGated, Edit: true},
		"LS":           {Class: ClassGated, ReadOnly: true},
		"NotebookRead": {Class: ClassGated, ReadOnly: true},

		// Claude Code steering itself.
		"Agent":                    {Class: ClassOrchestration, ReadOnly: true},
		"Task":                     {Class: ClassOrchestration, ReadOnly: true}, // Agent's earlier name
		"AskUserQuestion":          {Class: ClassOrchestration, ReadOnly: true},
		"EnterPlanMode":            {Class: ClassOrchestration, ReadOnly: true},
		"ExitPlanMode":             {Class: ClassOrchestration, ReadOnly: true},
		"TodoWrite":                {Class: ClassOrchestration, ReadOnly: true},
		"Skill":                    {Class: ClassOrchestration, ReadOnly: true},
		"SlashCommand":             {Class: ClassOrchestration, ReadOnly: true},
		"TaskCreate":               {Class: ClassOrchestration, ReadOnly: true},
		"TaskGet":                  {Class: ClassOrchestration, ReadOnly: true},
		"TaskList":                 {Class: ClassOrchestration, ReadOnly: true},
		"TaskUpdate":               {Class: ClassOrchestration, ReadOnly: true},
		"TaskStop":                 {Class: ClassOrchestration, ReadOnly: true},
		"TaskOutput":               {Class: ClassOrchestration, ReadOnly: true},
		"KillShell":                {Class: ClassOrchestration, ReadOnly: true}, // TaskStop's earlier name
		"BashOutput":               {Class: ClassOrchestration, ReadOnly: true}, // TaskOutput's earlier name
		"ToolSearch":               {Class: ClassOrchestration, ReadOnly: true},
		"ListAgents":               {Class: ClassOrchestration, ReadOnly: true},
		"SendMessage":              {Class: ClassOrchestration, ReadOnly: true},
		"SubagentHandback":         {Class: ClassOrchestration, ReadOnly: true},
		"WaitForMcpServers":        {Class: ClassOrchestration, ReadOnly: true},
		"SetGoal":                  {Class: ClassOrchestration, ReadOnly: true},
		"propose_skills":           {Class: ClassOrchestration, ReadOnly: true},
		"ReportFindings":           {Class: ClassOrchestration, ReadOnly: true},
		"ScheduleWakeup":           {Class: ClassOrchestration, ReadOnly: true},
		"CronCreate":               {Class: ClassOrchestration, ReadOnly: true},
		"CronDelete":               {Class: ClassOrchestration, ReadOnly: true},
		"CronList":                 {Class: ClassOrchestration, ReadOnly: true},
		"ReadNotifications":        {Class: ClassOrchestration, ReadOnly: true},
		"PushNotification":         {Class: ClassOrchestration, ReadOnly: true},
		"SendUserMessage":          {Class: ClassOrchestration, ReadOnly: true},
		"ShowOnboardingRolePicker": {Class: ClassOrchestration, ReadOnly: true},
		"ShareOnboardingGuide":     {Class: ClassOrchestration, ReadOnly: true},
		"OfferChromeSetup":         {Class: ClassOrchestration, ReadOnly: true},
		"EndConversation":          {Class: ClassOrchestration, ReadOnly: true},
		// The language server answers questions about code already read.
		"LSP": {Class: ClassOrchestration, ReadOnly: true},

		// Effects the input does not spell out for the gate.
		"EnterWorktree": {Class: ClassOpaque}, // creates a git worktree and moves into it
		"ExitWorktree":  {Class: ClassOpaque}, // may remove it, with its changes
		"Workflow":      {Class: ClassOpaque}, // runs a script
		"RemoteTrigger": {Class: ClassOpaque}, // starts and changes remote agent runs
		"Artifact":      {Class: ClassOpaque}, // publishes and uploads
		"Projects":      {Class: ClassOpaque}, // reads and writes a cloud project
		"ClaudeDesign":  {Class: ClassOpaque},
		"SendFeedback":  {Class: ClassOpaque}, // sends text to Anthropic
		"SendUserFile":  {Class: ClassOpaque}, // sends a file off the machine
	}
})

// ClaudeCode returns what airlock knows of the Claude Code tool name: its
// entry, an MCP tool (mcp__SERVER__TOOL, gated), or ClassUnknown.
func ClaudeCode(name string) ClaudeCodeTool {
	if info, ok := claudeCodeTools()[name]; ok {
		return info
	}
	if isMCPName(name) {
		return ClaudeCodeTool{Class: ClassGated}
	}
	return ClaudeCodeTool{Class: ClassUnknown}
}

// ClaudeCodeTools returns the names of the Claude Code tools airlock has
// entries for, sorted.
func ClaudeCodeTools() []string {
	names := make([]string, 0, len(claudeCodeTools()))
	for n := range claudeCodeTools() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ClaudeCodePreparers returns the preparers that decide a call of the
// Claude Code tool name: p (nil: the built-in preparers) for a gated
// tool, and for any other tool a copy of p in which the tool is one
// tool.invoke of its name, so that a rule naming it (deny Agent, allow
// EnterWorktree) decides it and, with no such rule, the gate leaves it
// to the caller's class handling instead of refusing it as unknown.
func ClaudeCodePreparers(p Preparers, name string) Preparers {
	if p == nil {
		p = builtin
	}
	if ClaudeCode(name).Class == ClassGated {
		return p
	}
	q := make(Preparers, len(p)+1)
	for k, v := range p {
		q[k] = v
	}
	q[name] = prepareNamedTool
	return q
}
