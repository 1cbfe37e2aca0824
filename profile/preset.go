package profile

import (
	"sort"
	"strings"
	"time"
)

// SystemReadPaths are the system runtime paths every preset can read: the
// programs, libraries and configuration a command needs to start.
var systemReadPaths = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"}

// SystemReadPaths returns the system runtime paths every preset reads.
func SystemReadPaths() []string { return append([]string(nil), systemReadPaths...) }

// secretSystemFiles are files under the system paths that hold credentials;
// every preset hides them even though /etc is readable.
var secretSystemFiles = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/sudoers", "/etc/sudoers.d", "/etc/ssh/ssh_host_*_key",
	"/etc/ssl/private", "/etc/security/opasswd", "/etc/krb5.keytab",
	"/etc/credstore", "/etc/credstore.encrypted",
}

// protectedInWorkspace are the agent-persistence paths that stay read-only
// inside a writable workspace: a command that could write them could make
// a later, unsandboxed program (git, an editor, the agent) run its code.
var protectedInWorkspace = []string{
	".git/hooks", ".git/config", ".git/commondir",
	// Submodules keep their own hooks and config inside .git/modules.
	".git/modules/*/hooks", ".git/modules/*/config", ".git/modules/*/commondir",
	".git/modules/*/modules/*/hooks", ".git/modules/*/modules/*/config",
	".airlock", ".claude", ".mcp.json",
	// Husky's hook scripts: .husky/_ (core.hooksPath) runs the ones
	// beside it (.husky/pre-commit).
	".husky",
	// Other agents' and editors' settings that start programs: MCP
	// servers (.cursor/mcp.json, .gemini/settings.json), tasks (.zed),
	// and a dev container's initializeCommand, which runs on the host.
	".cursor", ".gemini", ".zed", ".devcontainer",
	".vscode", ".idea", ".bashrc", ".bash_profile", ".bash_login",
	".bash_logout", ".profile", ".zshrc", ".zshenv", ".zprofile",
	".zlogin", ".envrc",
	// Hook managers the git hooks delegate to, like .husky: their
	// configs name the commands a commit runs on the host.
	".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml", "lefthook.yaml", ".lefthook.yaml",
	"lefthook-local.yml", ".lefthook-local.yml", "lefthook-local.yaml", ".lefthook-local.yaml",
	"lefthook.json", ".lefthook.json", "lefthook.toml", ".lefthook.toml",
	// The same agents' and editors' settings, and direnv's .envrc, in
	// any directory below the top: an agent or editor opened there, or
	// a shell that enters it, reads them.
	"**/.airlock", "**/.claude", "**/.mcp.json", "**/.cursor", "**/.gemini", "**/.zed",
	"**/.devcontainer", "**/.vscode", "**/.idea", "**/.envrc",
}

// defaultEnvAllow are the variables that pass through by default: locale
// and terminal only, nothing that can hold a secret.
var defaultEnvAllow = []string{"LANG", "LANGUAGE", "LC_*", "TERM", "COLORTERM", "TZ", "NO_COLOR"}

var presets = map[string]func() Spec{
	"workspace": workspacePreset,
	"read-only": func() Spec {
		s := workspacePreset()
		s.Preset = "read-only"
		s.ReadOnlyWorkspace = true
		return s
	},
	"strict": func() Spec {
		s := workspacePreset()
		s.Preset = "strict"
		s.Budgets = Budgets{Memory: 1 << 30, Pids: 128, CPU: 1, WallTime: Duration(10 * time.Minute), Output: 8 << 20, Scratch: 128 << 20}
		// Exec only from the system paths and the workspace: nothing
		// dropped into the private tmp or HOME can be run.
		s.Filesystem.Exec = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", WorkspaceToken}
		s.Require = append(s.Require, "exec-boundary")
		return s
	},
}

func workspacePreset() Spec {
	return Spec{
		Preset: "workspace",
		Filesystem: FilesystemSpec{
			Read:      SystemReadPaths(),
			Deny:      append([]string(nil), secretSystemFiles...),
			Protected: append([]string(nil), protectedInWorkspace...),
		},
		Env:     EnvSpec{Allow: append([]string(nil), defaultEnvAllow...)},
		Network: NetworkSpec{Mode: NetworkModeNone},
		Budgets: Budgets{Memory: 4 << 30, Pids: 1024, Output: 64 << 20, Scratch: 1 << 30},
		// What a host must give for any preset to run at all. Network and
		// resource guarantees depend on flags and privilege, so the Report
		// shows them without making them a condition.
		Require: []string{"read-boundary", "write-boundary", "process-isolation", "ipc-isolation",
			"syscall-filter", "no-new-privs", "lifetime-containment", "env-scrub"},
	}
}

// WorkspaceToken stands for the workspace in a spec's path lists; New
// replaces it with the workspace path.
const WorkspaceToken = "$WORKSPACE"

// Preset returns the spec of a named preset, or an empty spec if the name
// is unknown (LookupPreset tells).
func Preset(name string) Spec {
	if f, ok := presets[name]; ok {
		return f()
	}
	return Spec{}
}

// LookupPreset returns the spec of a named preset or an error listing the
// known names.
func LookupPreset(name string) (Spec, error) {
	if f, ok := presets[name]; ok {
		return f(), nil
	}
	return Spec{}, &FieldError{Field: "preset", Value: name,
		Fix: "use one of " + strings.Join(PresetNames(), ", ")}
}

// PresetNames lists the presets in sorted order.
func PresetNames() []string {
	var names []string
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// DefaultPreset is the preset used when none is named.
const DefaultPreset = "workspace"
