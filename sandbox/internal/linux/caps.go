package linux

import (
	"fmt"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// lastCap is the highest capability number any current kernel defines;
// dropping a number the kernel does not know fails with EINVAL, which
// dropCapabilities treats as the end of the list.
const lastCap = 63

// dropCapabilities empties the bounding, ambient, inheritable, permitted
// and effective sets and locks the securebits, so that neither execve of a
// root-owned binary nor a file capability gives any capability back.
func dropCapabilities() error {
	for c := 0; c <= lastCap; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if err == unix.EINVAL {
				break
			}
			return fmt.Errorf("bounding set %d: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("ambient: %w", err)
	}
	const bits = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<4 | 1<<5 // NOROOT, NO_SETUID_FIXUP, KEEP_CAPS_LOCKED with their locks
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, bits, 0, 0, 0); err != nil {
		return fmt.Errorf("securebits: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// lookPath finds name on the PATH of env, as a shell would.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, checkExecutable(name)
	}
	search := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			search = v
		}
	}
	// strings.Split, not filepath.SplitList: path/filepath would delay the
	// stage-2 init hook (see netaddr.go). An empty PATH searches nowhere,
	// as filepath.SplitList("") is empty.
	var dirs []string
	if search != "" {
		dirs = strings.Split(search, ":")
	}
	for _, dir := range dirs {
		if dir == "" {
			dir = "."
		}
		p := path.Join(dir, name)
		if checkExecutable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found in the sandbox's PATH (%s)", name, search)
}

func checkExecutable(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return fmt.Errorf("%s: not an executable file", p)
	}
	return nil
}

// loopbackUp sets IFF_UP on "lo" in the new network namespace, so the
// command can use 127.0.0.1 among its own processes.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}
