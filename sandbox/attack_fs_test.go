package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/profile"
)

// Reading the caller's credentials: directly, through a symlink and
// through a hard link planted in the workspace (the engine masks
// workspace files whose inode has links outside the workspace), including
// a hard link in a directory the scan cannot read but the command could
// chmod open.
func TestAttackReadHomeSecrets(t *testing.T) {
	sb, sec := attackTarget(t, nil)
	ws := sb.Workspace
	must(t, os.Symlink(sec.SSHKey, filepath.Join(ws, "ssh-key-link")))
	must(t, os.Symlink(filepath.Dir(sec.AWS), filepath.Join(ws, "aws-dir-link")))
	must(t, os.Link(sec.AWS, filepath.Join(ws, "aws-hardlink")))
	locked := filepath.Join(ws, "locked")
	must(t, os.Mkdir(locked, 0o700))
	must(t, os.Link(sec.SSHKey, filepath.Join(locked, "key")))
	lock := func() { must(t, os.Chmod(locked, 0)) }
	t.Cleanup(func() { os.Chmod(locked, 0o700) })

	for _, tc := range []struct {
		name, script string
	}{
		{"direct/ssh", `cat "$HOME/.ssh/id_ed25519"`},
		{"direct/aws-absolute", `cat ` + sec.AWS},
		{"symlink/file", `cat ssh-key-link`},
		{"symlink/dir", `cat aws-dir-link/credentials`},
		{"hardlink", `cat aws-hardlink`},
		{"hardlink/in-unreadable-dir", `chmod 700 locked; cat locked/key`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lock()
			p := sandboxtest.Probe{Args: sandboxtest.Sh(tc.script)}
			requireControl(t, sb.Host(t, p), sec.Value)
			lock() // the control may have opened it
			o := sb.Run(t, p)
			requireNotIn(t, o, sec.Value)
			requireFailed(t, o)
		})
	}

	// Writing through the hard link must not change the secret on the
	// host. The sandbox goes first: the control changes the file.
	t.Run("hardlink/write", func(t *testing.T) {
		p := sandboxtest.Probe{Args: sandboxtest.Sh(`echo pwned >> aws-hardlink`)}
		before := sandboxtest.FileState(sec.AWS)
		o := sb.Run(t, p)
		if after := sandboxtest.FileState(sec.AWS); after != before {
			t.Errorf("ATTACK SUCCEEDED: %s changed on the host through the workspace hard link\n%s", sec.AWS, o)
		}
		requireFailed(t, o)
		requireControl(t, sb.Host(t, p), "")
		if sandboxtest.FileState(sec.AWS) == before {
			t.Fatalf("positive control failed: writing through the hard link did not change %s on the host", sec.AWS)
		}
	})
}

// Reading system credentials that /etc, readable as a whole, still holds:
// /etc/shadow and friends (deny-masked by every preset). The probe prints
// hashes, never content, so a failure does not put host secrets in the log.
func TestAttackReadSystemSecrets(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	keys, _ := filepath.Glob("/etc/ssh/ssh_host_*_key")
	var files []string
	for _, f := range append([]string{"/etc/shadow", "/etc/gshadow"}, keys...) {
		if sandboxtest.Exists(f) {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		t.Fatal("this host has no /etc/shadow")
	}
	p := sandboxtest.Probe{Args: sandboxtest.Sh(`for f; do sha256sum "$f"; done`, files...)}

	t.Run("etc-shadow", func(t *testing.T) {
		if sandboxtest.Unprivileged() {
			// The host forbids this user /etc/shadow too, so there is no
			// control; "deny-mask" below is the controlled equivalent.
			o := sb.Run(t, p)
			requireFailed(t, o)
			for _, line := range strings.Split(o.Stdout, "\n") {
				if line != "" && !strings.HasPrefix(line, emptySHA256) {
					t.Errorf("ATTACK SUCCEEDED: the sandbox hashed a system secret: %q", line)
				}
			}
			return
		}
		c := sb.Host(t, p)
		requireControl(t, c, "/etc/shadow")
		o := sb.Run(t, p)
		for _, line := range strings.Split(strings.TrimSpace(c.Stdout), "\n") {
			if sum, _, _ := strings.Cut(line, " "); sum != emptySHA256 {
				requireNotIn(t, o, sum)
			}
		}
		requireFailed(t, o)
	})

	// The same mechanism (a deny path under a readable tree) on a file
	// this user can read on the host.
	t.Run("deny-mask", func(t *testing.T) {
		dir := t.TempDir()
		secret := sandboxtest.Marker(t, "shadow")
		file := filepath.Join(dir, "shadow")
		must(t, os.WriteFile(file, []byte(secret+"\n"), 0o600))
		sb := sandboxtest.New(t, preset, sandboxtest.Workspace(t), func(s *profile.Spec) {
			s.Filesystem.Read = append(s.Filesystem.Read, dir)
			s.Filesystem.Deny = append(s.Filesystem.Deny, file)
		})
		p := sandboxtest.Probe{Args: sandboxtest.Sh(`cat "$1"`, file)}
		requireControl(t, sb.Host(t, p), secret)
		o := sb.Run(t, p)
		requireNotIn(t, o, secret)
		requireFailed(t, o)
	})
}

const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// Writing outside the workspace: a host directory no preset shows, the
// caller's temp directory (under the sandbox's private /tmp), the caller's
// HOME (under the private HOME), /etc, and a read-only profile path. The
// sandbox goes first, then the control writes the same target.
func TestAttackWriteOutsideWorkspace(t *testing.T) {
	sb, sec := attackTarget(t, nil)
	probe := sandboxtest.Sh(`mkdir -p "$(dirname "$1")"; echo pwned > "$1"`)
	attack := func(t *testing.T, sb *sandboxtest.Sandbox, target string, control bool) {
		t.Helper()
		o := sb.Run(t, sandboxtest.Probe{Args: append(probe, target)})
		if sandboxtest.Exists(target) {
			t.Errorf("ATTACK SUCCEEDED: %s was created on the host\n%s", target, o)
		}
		if !control {
			return
		}
		requireControl(t, sb.Host(t, sandboxtest.Probe{Args: append(probe, target)}), "")
		if !sandboxtest.Exists(target) {
			t.Fatalf("positive control failed: the probe did not create %s on the host", target)
		}
	}

	t.Run("outside-any-view", func(t *testing.T) {
		attack(t, sb, filepath.Join(sandboxtest.OutsideDir(t), "pwned"), true)
	})
	t.Run("callers-tmp", func(t *testing.T) {
		attack(t, sb, filepath.Join(t.TempDir(), "sub", "pwned"), true)
	})
	t.Run("callers-home", func(t *testing.T) {
		attack(t, sb, filepath.Join(sec.Home, ".bashrc"), true)
	})
	t.Run("etc", func(t *testing.T) {
		target := filepath.Join("/etc", sandboxtest.Marker(t, "pwned"))
		t.Cleanup(func() { os.Remove(target) })
		// Unprivileged, the host cannot write /etc either, so there is
		// no control; "read-only-path" is the controlled equivalent.
		attack(t, sb, target, !sandboxtest.Unprivileged())
	})
	t.Run("read-only-path", func(t *testing.T) {
		dir := t.TempDir()
		sb := sandboxtest.New(t, preset, sb.Workspace, func(s *profile.Spec) {
			s.Filesystem.Read = append(s.Filesystem.Read, dir)
		})
		attack(t, sb, filepath.Join(dir, "pwned"), true)
	})
}

// Writing the agent-persistence paths of a real git repository, which the
// preset keeps read-only inside the writable workspace: directly, with
// git config, by moving the protected path (or its parent) aside and
// recreating it, and by creating protected paths that were absent at
// start. Each case runs in a fresh repository, the sandbox first; the
// control then does the same to the same repository. The evidence is the
// host's files after the run, and where the host's git now looks for
// hooks.
func TestAttackWriteGitPersistence(t *testing.T) {
	sandboxtest.PlantSecrets(t)
	const hook = `printf '#!/bin/sh\necho pwned\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit`
	for _, tc := range []struct {
		name, script string
		evidence     []string // workspace-relative files that must not change
		setup        func(t *testing.T, ws string)
		knownGap     string
	}{
		{name: "hooks/pre-commit", script: hook, evidence: []string{".git/hooks/pre-commit"}},
		{name: "config/append", script: `printf '[core]\n\thooksPath = /tmp/evil\n' >> .git/config`, evidence: []string{".git/config"}},
		{name: "config/git-config", script: `git config core.hooksPath /tmp/evil`, evidence: []string{".git/config"}},
		{name: "config/replace", script: `cp .git/config .git/config.new && echo '[core] hooksPath = /tmp/evil' >> .git/config.new && mv -f .git/config.new .git/config`, evidence: []string{".git/config"}},
		{name: "hooks/replace-dir", script: `mv .git/hooks .git/hooks.old && mkdir .git/hooks && ` + hook, evidence: []string{".git/hooks/pre-commit"}},
		{name: "git-dir/replace", script: `mv .git .git.old && git init -q . && ` + hook, evidence: []string{".git/hooks/pre-commit"}},
		{name: "git-dir/replace-config", script: `mv .git .git.old && git init -q . && git config core.hooksPath /tmp/evil`},
		{name: "git-dir/remove", script: `rm -rf .git; git init -q . ; ` + hook, evidence: []string{".git/hooks/pre-commit"}},
		{name: "absent-at-start", script: `echo 'echo pwned' > .envrc && mkdir -p .vscode .claude && echo '{}' > .vscode/tasks.json && echo '{}' > .claude/settings.json && echo '{}' > .mcp.json`,
			evidence: []string{".envrc", ".vscode/tasks.json", ".claude/settings.json", ".mcp.json"}},
		{
			name:     "git-dir/commondir",
			script:   `rm -rf .evil && mkdir .evil && cp -r .git/. .evil/ && printf '#!/bin/sh\necho pwned\n' > .evil/hooks/pre-commit && chmod +x .evil/hooks/pre-commit && echo ../.evil > .git/commondir`,
			evidence: []string{".git/commondir"},
		},
		{
			name:     "git-dir/submodule-hooks",
			setup:    addSubmodule,
			script:   `printf '#!/bin/sh\necho pwned\n' > .git/modules/sub/hooks/pre-commit && chmod +x .git/modules/sub/hooks/pre-commit && git -C sub config core.hooksPath /tmp/evil`,
			evidence: []string{".git/modules/sub/hooks/pre-commit", ".git/modules/sub/config"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := sandboxtest.GitWorkspace(t)
			if tc.setup != nil {
				tc.setup(t, ws)
			}
			sb := sandboxtest.New(t, preset, ws, nil)
			before := map[string]string{}
			for _, e := range tc.evidence {
				before[e] = sandboxtest.FileState(filepath.Join(ws, e))
			}
			beforeHooks := gitPath(t, ws, "hooks")
			// attacked lists what the host shows changed: evidence files,
			// and where the host's git now looks for hooks (a repository
			// git no longer recognises runs none).
			attacked := func() []string {
				var changed []string
				for _, e := range tc.evidence {
					if sandboxtest.FileState(filepath.Join(ws, e)) != before[e] {
						changed = append(changed, e)
					}
				}
				if hooks := gitPath(t, ws, "hooks"); hooks != beforeHooks && !strings.HasPrefix(hooks, "error:") {
					changed = append(changed, "git's hooks path is now "+hooks)
				}
				return changed
			}
			p := sandboxtest.Probe{Args: sandboxtest.Sh(tc.script)}
			o := sb.Run(t, p)
			if changed := attacked(); len(changed) > 0 {
				if tc.knownGap != "" {
					t.Skipf("KNOWN GAP: %s (host evidence: %q)", tc.knownGap, changed)
				}
				t.Errorf("ATTACK SUCCEEDED: on the host: %q\n%s", changed, o)
			}
			requireControl(t, sb.Host(t, p), "")
			if len(attacked()) == 0 {
				t.Fatalf("positive control failed: the probe changed none of %q on the host, nor git's hooks path", tc.evidence)
			}
		})
	}
}

// addSubmodule makes a second repository and adds it to ws as submodule
// "sub", so that ws/.git/modules/sub holds its git directory.
func addSubmodule(t *testing.T, ws string) {
	t.Helper()
	sub := sandboxtest.GitWorkspace(t)
	cmd := exec.Command("git", "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "sub")
	cmd.Dir = ws
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git submodule add: %v\n%s", err, out)
	}
}

// gitPath asks the host's git where it finds a repository path (hooks,
// config), which is what a later, unsandboxed git will use.
func gitPath(t *testing.T, ws, what string) string {
	t.Helper()
	cmd := exec.Command("git", "rev-parse", "--path-format=absolute", "--git-path", what)
	cmd.Dir = ws
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "error: " + strings.TrimSpace(string(out))
	}
	return strings.TrimSpace(string(out))
}

// Opening a disk: the sandbox's /dev holds no block device, and it cannot
// make one. The probe prints a hash of the first 4 KiB, so the evidence is
// the host's hash in the sandbox's output. Unprivileged, the host cannot
// open the disk either; the control then shows the node is visible, and
// the sandbox must not even see it.
func TestAttackOpenBlockDevice(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	dev := sandboxtest.BlockDevice(t)
	var st unix.Stat_t
	must(t, unix.Stat(dev, &st))
	const src = `
import hashlib, os, stat, sys
dev, major, minor = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
try:
    print("DEVICE-SEEN block=%s" % stat.S_ISBLK(os.stat(dev).st_mode))
except OSError as e:
    print("device absent:", e)
paths = [dev]
for d in (os.environ.get("TMPDIR", "/tmp"), os.getcwd()):
    node = os.path.join(d, "airlock-blk")
    try:
        os.mknod(node, stat.S_IFBLK | 0o600, os.makedev(major, minor))
        paths.append(node)
    except OSError as e:
        print("mknod in", d, "failed:", e)
for p in paths:
    try:
        fd = os.open(p, os.O_RDONLY)
    except OSError as e:
        print("open failed:", e)
        continue
    print("DEVICE-OPENED", p, hashlib.sha256(os.read(fd, 4096)).hexdigest())
    sys.exit(0)
sys.exit(1)
`
	p := sandboxtest.Probe{Args: sandboxtest.Py(src, dev, fmt.Sprint(unix.Major(st.Rdev)), fmt.Sprint(unix.Minor(st.Rdev)))}
	c := sb.Host(t, p)
	o := sb.Run(t, p)
	requireNotIn(t, o, "DEVICE-SEEN", "DEVICE-OPENED")
	requireFailed(t, o)
	if !strings.Contains(c.Output(), "DEVICE-OPENED") {
		// Unprivileged (or on a host that refuses even root its disks),
		// the control can only show that the node is there to be seen.
		if !strings.Contains(c.Output(), "DEVICE-SEEN block=True") {
			t.Fatalf("positive control failed: %s is not visible as a block device on the host\n%s", dev, c)
		}
		t.Logf("the host does not let this user open %s; the control shows it visible, the sandbox must not even see it", dev)
		return
	}
	requireControl(t, c, "DEVICE-OPENED "+dev)
}

// Setuid escalation: a setuid binary owned by another user changes the
// effective uid on the host and must not in the sandbox (nosuid mounts,
// no_new_privs, an unmapped owner). As root, the sandbox's uid 0 must also
// hold no capability and be unable to setuid.
func TestAttackSetuid(t *testing.T) {
	sandboxtest.PlantSecrets(t)
	bin, owner := sandboxtest.SetuidBinary(t)
	sb := sandboxtest.New(t, preset, sandboxtest.Workspace(t), func(s *profile.Spec) {
		s.Filesystem.Read = append(s.Filesystem.Read, filepath.Dir(bin))
	})
	t.Run("setuid-binary", func(t *testing.T) {
		p := sandboxtest.Probe{Args: []string{bin}}
		requireControl(t, sb.Host(t, p), fmt.Sprintf("euid=%d(", owner))
		o := sb.Run(t, p)
		requireNotIn(t, o, "euid=")
	})
	t.Run("capabilities", func(t *testing.T) {
		script := `grep ^CapEff /proc/self/status`
		if sandboxtest.Unprivileged() {
			// An unprivileged user's way to capabilities is a user
			// namespace of its own.
			script = `unshare -Ur grep ^CapEff /proc/self/status`
		}
		p := sandboxtest.Probe{Args: sandboxtest.Sh(script)}
		c := sb.Host(t, p)
		requireControl(t, c, "CapEff:")
		if strings.Contains(c.Stdout, "0000000000000000") {
			t.Fatalf("positive control failed: the probe shows no capability on the host\n%s", c)
		}
		o := sb.Run(t, p)
		if strings.Contains(o.Stdout, "CapEff:") && !strings.Contains(o.Stdout, "0000000000000000") {
			t.Errorf("ATTACK SUCCEEDED: the sandboxed command holds capabilities\n%s", o)
		}
	})
	t.Run("setuid-syscall", func(t *testing.T) {
		p := sandboxtest.Probe{Args: sandboxtest.Py(`import os; os.setgroups([]); os.setgid(1); os.setuid(1); print("NOW uid=%d" % os.getuid())`)}
		if !sandboxtest.Unprivileged() {
			requireControl(t, sb.Host(t, p), "NOW uid=1")
		}
		// Unprivileged, setuid fails on the host too: no control, and
		// "setuid-binary" is the controlled case.
		o := sb.Run(t, p)
		requireNotIn(t, o, "NOW uid=")
		requireFailed(t, o)
	})
}

// Mount and namespace tricks: new user namespaces (the way an
// unprivileged process gets capabilities), new mount namespaces and
// mounting a tmpfs. Root's controls run in a new mount namespace so they
// never touch the host's; an unprivileged control needs a user namespace.
func TestAttackMountAndNamespaces(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	mnt := filepath.Join(sb.Workspace, "mnt")
	must(t, os.Mkdir(mnt, 0o755))
	const mountScript = `mount -t tmpfs none "$1" && grep -q " $1 " /proc/self/mountinfo && echo MOUNTED`
	userns := "" // prefix giving an unprivileged control its privilege
	if sandboxtest.Unprivileged() {
		userns = "-Ur "
	}
	for _, tc := range []struct {
		name, script, want string
	}{
		{"unshare-user", `unshare -U true && echo DONE`, "DONE"},
		{"unshare-user-as-root", `unshare -Ur sh -c 'echo UID=$(id -u)'`, "UID=0"},
		{"unshare-mount", `unshare ` + userns + `-m true && echo DONE`, "DONE"},
		{"mount-tmpfs-in-new-ns", `unshare ` + userns + `-m sh -c '` + mountScript + `' sh "$1"`, "MOUNTED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := sandboxtest.Probe{Args: sandboxtest.Sh(tc.script, mnt)}
			requireControl(t, sb.Host(t, p), tc.want)
			o := sb.Run(t, p)
			if o.ExitCode == 0 && strings.Contains(o.Stdout, tc.want) {
				t.Errorf("ATTACK SUCCEEDED: %s worked in the sandbox\n%s", tc.name, o)
			}
		})
	}
	// The sandbox's own mount namespace, without unshare. No control:
	// on the host this would mount over the real directory.
	t.Run("mount-tmpfs-directly", func(t *testing.T) {
		o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Sh(mountScript+`; touch "$1/inside"`, mnt)})
		requireNotIn(t, o, "MOUNTED")
		if !sandboxtest.Exists(filepath.Join(mnt, "inside")) {
			// The touch went somewhere other than the host directory:
			// a mount covered it.
			t.Errorf("ATTACK SUCCEEDED: a mount covered %s inside the sandbox\n%s", mnt, o)
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// lineAfter returns the rest of the first line of out that starts with
// prefix, or "" when there is none.
func lineAfter(out, prefix string) string {
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			return rest
		}
	}
	return ""
}
