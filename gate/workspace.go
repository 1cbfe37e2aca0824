package gate

import (
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/netip"
	"path/filepath"
	"strings"

	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/tool"
)

// ProfileAccess is what the gate reads of a profile in step 1: the access
// it gives one requirement, and its fingerprint for grants and the audit.
// *profile.Profile implements it.
type ProfileAccess interface {
	Access(kind, target string) profile.Access
	Fingerprint() string
}

// WorkspaceAccess is the access table of the workspace preset (DESIGN.md
// section 4) as a ProfileAccess, for a gate used without a full profile.
type WorkspaceAccess struct {
	// Workspace is the absolute workspace directory.
	Workspace string
	// AutoAllowInSandbox makes commands Allow instead of Gated, for
	// callers that run every command inside the sandbox.
	AutoAllowInSandbox bool
}

// systemReadPaths are readable for every command: what programs need to
// start.
var systemReadPaths = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/opt"}

// secretSystemPaths are under systemReadPaths but hold credentials.
var secretSystemPaths = []string{"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d"}

// protectedPaths, relative to the workspace, stay Gated for writing: a
// write there could make a later program (git, an editor, a shell, the
// agent) run code.
var protectedPaths = []string{
	".git/hooks", ".git/config", ".airlock", ".claude", ".mcp.json", ".vscode", ".idea",
	".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zshenv", ".zprofile", ".envrc",
}

// Access implements ProfileAccess.
func (w WorkspaceAccess) Access(kind, target string) profile.Access {
	switch kind {
	case tool.KindCommandExecute:
		if w.AutoAllowInSandbox {
			return profile.AccessAllow
		}
		return profile.AccessGated
	case tool.KindFilesystemRead:
		p, ok := w.abs(target)
		if !ok {
			return profile.AccessDeny
		}
		for _, s := range secretSystemPaths {
			if within(s, p) {
				return profile.AccessDeny
			}
		}
		if within(w.ws(), p) {
			return profile.AccessAllow
		}
		for _, s := range systemReadPaths {
			if within(s, p) {
				return profile.AccessAllow
			}
		}
		return profile.AccessDeny
	case tool.KindFilesystemWrite:
		p, ok := w.abs(target)
		if !ok || !within(w.ws(), p) {
			return profile.AccessDeny
		}
		rel, _ := filepath.Rel(w.ws(), p)
		for _, prot := range protectedPaths {
			if within(prot, rel) {
				return profile.AccessGated
			}
		}
		if filepath.Base(rel) != rel {
			// Shell rc files are protected at any depth of the
			// workspace, since a HOME may be pointed at any directory.
			switch filepath.Base(rel) {
			case ".bashrc", ".bash_profile", ".profile", ".zshrc", ".zshenv", ".zprofile":
				return profile.AccessGated
			}
		}
		return profile.AccessAllow
	case tool.KindNetworkConnect:
		host, _, err := net.SplitHostPort(target)
		if err != nil {
			host = target
		}
		host = strings.Trim(host, "[]")
		if addr, err := netip.ParseAddr(host); err == nil && profile.IsPrivateAddr(addr) {
			return profile.AccessDeny
		}
		if h := strings.ToLower(strings.TrimSuffix(host, ".")); h == "localhost" || strings.HasSuffix(h, ".localhost") ||
			h == "metadata.google.internal" || h == "metadata" {
			return profile.AccessDeny
		}
		return profile.AccessGated
	case tool.KindToolInvoke:
		return profile.AccessGated
	}
	return profile.AccessDeny
}

// Fingerprint implements ProfileAccess: a hash of the access table's
// inputs.
func (w WorkspaceAccess) Fingerprint() string {
	auto := "0"
	if w.AutoAllowInSandbox {
		auto = "1"
	}
	sum := sha256.Sum256([]byte("gate.WorkspaceAccess\x00" + w.ws() + "\x00" + auto))
	return hex.EncodeToString(sum[:])
}

func (w WorkspaceAccess) ws() string { return filepath.Clean(w.Workspace) }

func (w WorkspaceAccess) abs(target string) (string, bool) {
	if target == "" || strings.ContainsRune(target, tool.Hole) {
		return "", false
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(w.ws(), target)
	}
	return filepath.Clean(target), true
}

// within reports whether p is dir or inside it.
func within(dir, p string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}
