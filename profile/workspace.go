package profile

import (
	"os"
	"os/user"
	"path/filepath"
	"strconv"
)

// The sandbox binds the workspace read-write (unless read_only_workspace)
// with everything mounted beneath it, so a workspace that is really the
// caller's home or a system tree hands the command what every other
// boundary keeps from it. New refuses such a workspace (checkWorkspace).

// kernelTrees are the host's own /proc, /sys and /dev: the sandbox has
// fresh, minimal ones, and binding the host's read-write (sysfs with its
// writable knobs, device nodes) is never right, forced or not.
var kernelTrees = []string{"/proc", "/sys", "/dev"}

// systemTrees hold the host's programs, configuration and state: a
// workspace at or beneath one is refused unless forced. Beneath /var/tmp
// (scratch space like /tmp's), /var/home (/home on Fedora Atomic) and the
// caller's home directory are the exceptions.
var systemTrees = []string{
	"/bin", "/boot", "/etc", "/lib", "/lib32", "/lib64", "/libx32",
	"/run", "/sbin", "/snap", "/usr", "/var",
}

// sharedRoots are directories that hold other people's things side by
// side; a project lives beneath one, never at it.
var sharedRoots = []string{"/home", "/media", "/mnt", "/opt", "/srv", "/tmp", "/var/home", "/var/tmp"}

// checkWorkspace refuses a workspace (absolute, symlink-free) that the
// sandbox must not bind read-write: the whole filesystem or an ancestor
// or part of /proc, /sys and /dev (always); the caller's home or one of
// its ancestors, a system tree or a shared root (unless force). home is
// the caller's $HOME, already absolute or empty.
func checkWorkspace(value, ws, home string, force bool) error {
	for _, k := range kernelTrees {
		if Within(k, ws) || Within(ws, k) {
			fix := "the sandbox has its own " + k + "; the host's is never bound, not even with force_workspace; point at a project directory"
			if ws == "/" {
				fix = "the whole filesystem, the host's /proc, /sys and /dev included, cannot be the workspace, not even with force_workspace; point at the project directory"
			}
			return &FieldError{Field: "workspace", Value: value, Fix: fix}
		}
	}
	if force {
		return nil
	}
	const override = "; point at a project directory, or force it (--force-workspace, Spec.ForceWorkspace) if you really mean it"
	homes := homeDirs(home)
	for _, h := range homes {
		if Within(ws, h) {
			what := "your home directory " + h
			if ws != h {
				what = "an ancestor of your home directory " + h
			}
			return &FieldError{Field: "workspace", Value: value,
				Fix: "that is " + what + ", with every credential and dotfile in it, which the command could read and rewrite" + override}
		}
	}
	for _, s := range sharedRoots {
		if ws == s {
			return &FieldError{Field: "workspace", Value: value,
				Fix: s + " holds other projects and users' files side by side" + override}
		}
	}
	// Beneath the home directory is where projects live, also when it is
	// under /var (a service account's /var/lib/jenkins) — unless HOME
	// names a system tree itself.
	for _, h := range homes {
		if Within(h, ws) && !listed(systemTrees, h) && !listed(sharedRoots, h) {
			return nil
		}
	}
	for _, scratch := range []string{"/var/tmp", "/var/home"} {
		if Within(scratch, ws) {
			return nil
		}
	}
	for _, s := range systemTrees {
		if Within(s, ws) {
			return &FieldError{Field: "workspace", Value: value,
				Fix: "that is the system directory " + s + " or beneath it, which the command could rewrite" + override}
		}
	}
	return nil
}

// homeDirs are the caller's home directories, resolved through symlinks:
// $HOME and the account's home from the user database (they differ under
// sudo, or when HOME was changed).
func homeDirs(home string) []string {
	var out []string
	add := func(h string) {
		if h == "" || !filepath.IsAbs(h) {
			return
		}
		h = filepath.Clean(h)
		if real, err := filepath.EvalSymlinks(h); err == nil {
			h = real
		}
		for _, o := range out {
			if o == h {
				return
			}
		}
		out = append(out, h)
	}
	add(home)
	if u, err := user.LookupId(strconv.Itoa(os.Getuid())); err == nil {
		add(u.HomeDir)
	}
	return out
}

func listed(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
