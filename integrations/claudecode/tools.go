package claudecode

import (
	"sort"
	"strings"

	"github.com/airlockhq/airlock/tool"
)

// Class says how the hook decides a tool: by what the tool does.
type Class int

const (
	// Unknown is a tool this version of airlock has no entry for. It is
	// left to the person ("ask") unless a rule naming it denies it: it is
	// never denied for being new, and never allowed unseen.
	Unknown Class = iota
	// Gated tools have effects package tool derives (files, commands,
	// hosts, MCP servers); the gate decides them requirement by
	// requirement.
	Gated
	// Orchestration tools steer Claude Code itself: subagents,
	// questions, plan mode, todos, skills, task control. They touch
	// nothing the sandbox guards, so the hook gives no opinion and
	// Claude Code's own permissions apply, unless a rule naming the tool
	// decides it.
	Orchestration
	// Opaque tools have effects airlock cannot derive from their input
	// (a git worktree created, a script run remotely, a file published).
	// They are asked about unless a rule naming the tool decides.
	Opaque
)

func (c Class) String() string {
	switch c {
	case Gated:
		return "gated"
	case Orchestration:
		return "orchestration"
	case Opaque:
		return "opaque"
	}
	return "unknown"
}

// ToolInfo is what the hook knows of one Claude Code tool.
type ToolInfo struct {
	Class Class
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

// tools are the tools of Claude Code and the Claude Agent SDK as the SDK
// publishes them (BUILTIN_TOOL_NAMES and sdk-tools.d.ts of the version
// pinned in testdata/sdk; TestToolsMatchPublishedTypes fails when it
// names one that is not here), plus the names older releases used.
var tools = map[string]ToolInfo{
	// Files, commands, the network and MCP servers: the gate decides.
	"Bash":                   {Class: Gated, Shell: true},
	"Monitor":                {Class: Gated, Shell: true},
	"PowerShell":             {Class: Gated},
	"Read":                   {Class: Gated, ReadOnly: true},
	"Glob":                   {Class: Gated, ReadOnly: true},
	"Grep":                   {Class: Gated, ReadOnly: true},
	"WebFetch":               {Class: Gated, ReadOnly: true},
	"WebSearch":              {Class: Gated, ReadOnly: true},
	"ListMcpResourcesTool":   {Class: Gated, ReadOnly: true},
	"ReadMcpResourceTool":    {Class: Gated, ReadOnly: true},
	"ReadMcpResourceDirTool": {Class: Gated, ReadOnly: true},
	"Write":                  {Class: Gated, Edit: true},
	"Edit":                   {Class: Gated, Edit: true},
	"NotebookEdit":           {Class: Gated, Edit: true},
	// Names of earlier releases, still answered.
	"MultiEdit":    {Class: Gated, Edit: true},
	"LS":           {Class: Gated, ReadOnly: true},
	"NotebookRead": {Class: Gated, ReadOnly: true},

	// Claude Code steering itself.
	"Agent":                    {Class: Orchestration, ReadOnly: true},
	"Task":                     {Class: Orchestration, ReadOnly: true}, // Agent's earlier name
	"AskUserQuestion":          {Class: Orchestration, ReadOnly: true},
	"EnterPlanMode":            {Class: Orchestration, ReadOnly: true},
	"ExitPlanMode":             {Class: Orchestration, ReadOnly: true},
	"TodoWrite":                {Class: Orchestration, ReadOnly: true},
	"Skill":                    {Class: Orchestration, ReadOnly: true},
	"SlashCommand":             {Class: Orchestration, ReadOnly: true},
	"TaskCreate":               {Class: Orchestration, ReadOnly: true},
	"TaskGet":                  {Class: Orchestration, ReadOnly: true},
	"TaskList":                 {Class: Orchestration, ReadOnly: true},
	"TaskUpdate":               {Class: Orchestration, ReadOnly: true},
	"TaskStop":                 {Class: Orchestration, ReadOnly: true},
	"TaskOutput":               {Class: Orchestration, ReadOnly: true},
	"KillShell":                {Class: Orchestration, ReadOnly: true}, // TaskStop's earlier name
	"BashOutput":               {Class: Orchestration, ReadOnly: true}, // TaskOutput's earlier name
	"ToolSearch":               {Class: Orchestration, ReadOnly: true},
	"ListAgents":               {Class: Orchestration, ReadOnly: true},
	"SendMessage":              {Class: Orchestration, ReadOnly: true},
	"SubagentHandback":         {Class: Orchestration, ReadOnly: true},
	"WaitForMcpServers":        {Class: Orchestration, ReadOnly: true},
	"SetGoal":                  {Class: Orchestration, ReadOnly: true},
	"propose_skills":           {Class: Orchestration, ReadOnly: true},
	"ReportFindings":           {Class: Orchestration, ReadOnly: true},
	"ScheduleWakeup":           {Class: Orchestration, ReadOnly: true},
	"CronCreate":               {Class: Orchestration, ReadOnly: true},
	"CronDelete":               {Class: Orchestration, ReadOnly: true},
	"CronList":                 {Class: Orchestration, ReadOnly: true},
	"ReadNotifications":        {Class: Orchestration, ReadOnly: true},
	"PushNotification":         {Class: Orchestration, ReadOnly: true},
	"SendUserMessage":          {Class: Orchestration, ReadOnly: true},
	"ShowOnboardingRolePicker": {Class: Orchestration, ReadOnly: true},
	"ShareOnboardingGuide":     {Class: Orchestration, ReadOnly: true},
	"OfferChromeSetup":         {Class: Orchestration, ReadOnly: true},
	"EndConversation":          {Class: Orchestration, ReadOnly: true},
	// The language server answers questions about code already read.
	"LSP": {Class: Orchestration, ReadOnly: true},

	// Effects the input does not spell out for the gate.
	"EnterWorktree": {Class: Opaque}, // creates a git worktree and moves into it
	"ExitWorktree":  {Class: Opaque}, // may remove it, with its changes
	"Workflow":      {Class: Opaque}, // runs a script
	"RemoteTrigger": {Class: Opaque}, // starts and changes remote agent runs
	"Artifact":      {Class: Opaque}, // publishes and uploads
	"Projects":      {Class: Opaque}, // reads and writes a cloud project
	"ClaudeDesign":  {Class: Opaque},
	"SendFeedback":  {Class: Opaque}, // sends text to Anthropic
	"SendUserFile":  {Class: Opaque}, // sends a file off the machine
}

// Tool returns what the hook knows of the tool name: its entry, an MCP
// tool (mcp__SERVER__TOOL, gated), or Unknown.
func Tool(name string) ToolInfo {
	if info, ok := tools[name]; ok {
		return info
	}
	if server, tool, ok := strings.Cut(strings.TrimPrefix(name, "mcp__"), "__"); ok && server != "" && tool != "" && strings.HasPrefix(name, "mcp__") {
		return ToolInfo{Class: Gated}
	}
	return ToolInfo{Class: Unknown}
}

// KnownTools returns the names of the tools the hook has entries for,
// sorted.
func KnownTools() []string {
	names := make([]string, 0, len(tools))
	for n := range tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// shellTools are the tools whose "command" the sandbox rewrite wraps,
// so in sandbox mode they run confined, sorted.
func shellTools() []string {
	var names []string
	for n, info := range tools {
		if info.Shell {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// preparers are the gate's preparers for the hook: package tool's for
// Gated tools, and for every other tool a tool.invoke of its name, so
// that a rule naming it (deny Agent, allow EnterWorktree) decides it.
func preparers(name string) tool.Preparers {
	p := tool.Builtin()
	if Tool(name).Class != Gated {
		p[name] = namedTool
	}
	return p
}

// namedTool is the one requirement of a tool decided by its name: the
// hook's ParseInput has already refused input with duplicate keys, and
// nothing in it is read.
func namedTool(call tool.Call) ([]tool.Requirement, error) {
	return []tool.Requirement{{Kind: tool.KindToolInvoke, Target: call.Tool}}, nil
}
