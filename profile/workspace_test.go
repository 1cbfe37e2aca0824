package profile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkspaceChoice: a workspace that is the caller's home, an
// ancestor of it, a system tree or a shared root is refused unless
// forced; the host's /proc, /sys and /dev (and "/") are refused even
// when forced. Symlinks are resolved first, so a link to /etc is /etc.
func TestWorkspaceChoice(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(root, "home", "u")
	proj := filepath.Join(home, "proj")
	mustMkdir(t, proj)
	t.Setenv("HOME", home)
	linkToEtc := filepath.Join(root, "etc-link")
	linkToSys := filepath.Join(root, "sys-link")
	linkToHome := filepath.Join(root, "home-link")
	for target, link := range map[string]string{"/etc": linkToEtc, "/sys/kernel": linkToSys, home: linkToHome} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	varTmp, err := os.MkdirTemp("/var/tmp", "airlock-ws-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(varTmp) })

	tests := []struct {
		ws          string
		refused     bool   // without force
		forcedToo   bool   // refused even with force
		fixContains string // in the refusal
	}{
		{proj, false, false, ""},
		{varTmp, false, false, ""},
		{home, true, false, "your home directory"},
		{linkToHome, true, false, "your home directory"},
		{filepath.Dir(home), true, false, "ancestor of your home"},
		{"/etc", true, false, "system directory /etc"},
		{linkToEtc, true, false, "system directory /etc"},
		{"/usr/lib", true, false, "system directory /usr"},
		{"/var", true, false, "system directory /var"},
		{"/var/lib", true, false, "system directory /var"},
		{"/var/tmp", true, false, "other projects"},
		{"/tmp", true, false, "/tmp"}, // also an ancestor of this test's HOME
		{"/home", true, false, "other projects"},
		{"/sys", true, true, "own /sys"},
		{linkToSys, true, true, "own /sys"},
		{"/proc", true, true, "own /proc"},
		{"/proc/self", true, true, "own /proc"},
		{"/dev", true, true, "own /dev"},
		{"/", true, true, "whole filesystem"},
	}
	for _, tt := range tests {
		for _, force := range []bool{false, true} {
			s := Preset("workspace")
			s.Workspace = tt.ws
			s.ForceWorkspace = force
			_, err := New(s)
			if refuse := tt.refused && (!force || tt.forcedToo); !refuse {
				if err != nil {
					t.Errorf("workspace %s (force %v): refused: %v", tt.ws, force, err)
				}
				continue
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != "workspace" || !errors.Is(err, ErrInvalid) {
				t.Errorf("workspace %s (force %v): err = %v, want a workspace *FieldError", tt.ws, force, err)
				continue
			}
			if !strings.Contains(fe.Fix, tt.fixContains) {
				t.Errorf("workspace %s (force %v): fix %q does not say %q", tt.ws, force, fe.Fix, tt.fixContains)
			}
			if !tt.forcedToo && !strings.Contains(fe.Fix, "force") {
				t.Errorf("workspace %s: the refusal does not say how to force it: %q", tt.ws, fe.Fix)
			}
		}
	}
}

// TestWorkspaceBeneathHome: a home under /var (a service account's, or
// /var/home on Fedora Atomic) holds projects like any other; a HOME that
// names a system tree itself opens nothing.
func TestWorkspaceBeneathHome(t *testing.T) {
	for _, tc := range []struct {
		home, ws string
		ok       bool
	}{
		{"/var/lib/jenkins", "/var/lib/jenkins/workspace/job", true},
		{"/var/home/u", "/var/home/u/src/p", true},
		{"/nonexistent-home/u", "/var/home/other/p", true},
		{"/var/lib/jenkins", "/var/lib/postgresql", false},
		{"/usr", "/usr/lib", false},
		{"/var", "/var/lib/x", false},
	} {
		err := checkWorkspace(tc.ws, tc.ws, tc.home, false)
		if (err == nil) != tc.ok {
			t.Errorf("HOME %s, workspace %s: err = %v, want ok %v", tc.home, tc.ws, err, tc.ok)
		}
	}
}

// TestForceWorkspaceFingerprint: forcing is part of the fingerprint, and
// a profile file cannot set it.
func TestForceWorkspaceFingerprint(t *testing.T) {
	ws := t.TempDir()
	s := Preset("workspace")
	s.Workspace = ws
	a, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	s.ForceWorkspace = true
	b, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	if a.Fingerprint() == b.Fingerprint() {
		t.Error("force_workspace does not change the fingerprint")
	}
	if _, err := ParseTOML("p.toml", []byte("force_workspace = true\n")); err == nil || !strings.Contains(err.Error(), "unknown key") {
		t.Errorf("a file set force_workspace: err = %v", err)
	}
}

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}
