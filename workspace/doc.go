// Package workspace owns the effective policy of a workspace: for a
// directory and the caller's overrides, everything that applies there,
// loaded in one documented order, with the files each part came from.
//
//   - the profile: the preset, the workspace's .airlock/profile.toml, a
//     --profile file, then the caller's own layer (the CLI's flags), with
//     the workspace's deny rules compiled into it so the sandbox enforces
//     them too;
//   - the rules: the managed, user, workspace and local layers and Claude
//     Code's .claude/settings*.json (package rules reads each file);
//   - the sandbox switch ("sandbox = true" in any airlock rule file) and
//     the auto-allow setting (auto_allow_in_sandbox) of the surface that
//     runs the calls.
//
// Every entry point (airlock run, doctor, the Claude Code hook, mcp serve
// and proxy, serve's decide and exec, the local provider, policy explain
// and list) takes its policy from Load, so a grant's profile
// fingerprint is computed from the same profile the run will have, and no
// other package knows the layer order. It does not parse rule or profile
// syntax (packages rules and profile) nor decide calls (package gate).
package workspace
