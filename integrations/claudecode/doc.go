// Package claudecode connects Claude Code to the gate and the sandbox
// through Claude Code's PreToolUse hook, as Anthropic's hooks reference
// documents it (https://code.claude.com/docs/en/hooks).
//
// A [Hook] reads one call from stdin ([Input]: session_id,
// transcript_path, cwd, permission_mode, hook_event_name, tool_name,
// tool_input, tool_use_id), decides it with a gate.Evaluator over the
// rules and profile of the call's workspace (a workspace.Policy, loaded
// per call by [Hook].Policy for the workspace that cwd is in), and
// answers on stdout ([Output]):
// permissionDecision allow, deny or ask, with the gate's reason, or no
// decision at all. It never waits for a person: what the gate leaves to
// one becomes "ask", which Claude Code puts to its user.
//
// Each tool is decided by what it does (tool.ClaudeCode: one table, which
// POST /v1/decide reads too): tools with effects the gate derives go to
// it; tools that steer Claude Code itself (subagents, questions, plan
// mode, todos, skills, tasks) get no decision unless a rule names them;
// tools with effects airlock cannot see, and tools it does not know yet,
// are asked about. The answer is then weighed against
// Claude Code's permission_mode so that airlock never makes Claude Code
// less strict than it is alone: "allow" only where Claude Code would run
// the call unasked too, no decision where it would ask, deny in every
// mode (see [Verdict]). The tool list and the fields the gate reads are
// checked against the Claude Agent SDK's published types, pinned in
// testdata/sdk.
//
// Input that is empty, too large, not one JSON object, has duplicate
// keys, is for another event or has hook fields of the wrong type is
// blocked with exit status 2 and a reason on stderr; nothing that is not
// understood is allowed. Every answer is recorded with the session and
// tool-use ids.
//
// With a [Sandbox], a Bash or Monitor command that is not denied comes back with
// updatedInput: the same input whose command runs the original under
// "airlock run", carrying a single-use grant bound to that exact command,
// directory, workspace profile and execution (see [Sandbox]). As every
// such call runs in the sandbox, the gate is told so
// (workspace.Policy.Evaluator with the shell tools, Bash and Monitor): a command no rule mentions is
// allowed unless the profile sets auto_allow_in_sandbox = false, and a
// read of a whole tree is left to the sandbox's masks. Claude Code's own
// tools run outside it and get no such relief.
//
// [InstallHook] registers the hook in a Claude Code settings file,
// merging with what is there, in the exec form with onFailure "block", so
// that a hook that fails blocks the call.
//
// What this package does not do: decide anything itself (package gate),
// derive requirements (package tool), enforce anything (package sandbox,
// through airlock run), or talk MCP.
package claudecode
