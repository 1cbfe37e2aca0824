//go:build linux && (amd64 || arm64)

package seccomp

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// These tests need a filter for the architecture they run on, so they are
// built only where Build has one.
//
// The kernel tests re-exec the test binary as a child that installs the
// filter (or not, for the control) and runs one probe. A filter cannot be
// removed, so it must never land on the test process itself.
const (
	childProbeEnv  = "AIRLOCK_SECCOMP_TEST_CHILD"  // probe name
	childFilterEnv = "AIRLOCK_SECCOMP_TEST_FILTER" // "on" or "off"
)

func TestMain(m *testing.M) {
	if probe := os.Getenv(childProbeEnv); probe != "" {
		runChild(probe, os.Getenv(childFilterEnv) == "on")
		return
	}
	os.Exit(m.Run())
}

// runChild is the whole life of a child: set no_new_privs and install the
// filter if asked, run the probe, print "result=<ok|ERRNO|message>", exit 0.
func runChild(name string, filter bool) {
	runtime.LockOSThread()
	if filter {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			fmt.Fprintln(os.Stderr, "prctl(PR_SET_NO_NEW_PRIVS):", err)
			os.Exit(2)
		}
		p, err := Build(runtime.GOARCH)
		if err == nil {
			err = Install(p)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	probe, ok := probes[name]
	if !ok {
		fmt.Fprintln(os.Stderr, "unknown probe", name)
		os.Exit(2)
	}
	fmt.Printf("result=%s\n", outcome(probe()))
	os.Exit(0)
}

func outcome(err error) string {
	var errno syscall.Errno
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &errno):
		return unix.ErrnoName(errno)
	default:
		return err.Error()
	}
}

// sys makes a raw syscall and returns its errno, or nil on success.
func sys(trap uintptr, args ...uintptr) error {
	var a [6]uintptr
	copy(a[:], args)
	if _, _, errno := unix.Syscall6(trap, a[0], a[1], a[2], a[3], a[4], a[5]); errno != 0 {
		return errno
	}
	return nil
}

func ptmxIoctl(cmd uintptr) error {
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return fmt.Errorf("open /dev/ptmx: %w", err)
	}
	var buf [8]byte // room for a char (TIOCSTI) or a struct winsize
	buf[0] = 'x'
	return sys(unix.SYS_IOCTL, uintptr(fd), cmd, uintptr(unsafe.Pointer(&buf)))
}

func socket(domain, typ, proto uintptr) error { return sys(unix.SYS_SOCKET, domain, typ, proto) }

func socketpair(domain, typ uintptr) error {
	var fds [2]int32
	return sys(unix.SYS_SOCKETPAIR, domain, typ, 0, uintptr(unsafe.Pointer(&fds)))
}

func runTrue(attr *syscall.SysProcAttr) error {
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = attr
	return cmd.Run()
}

// childEnviron is the environment of a child running probe.
func childEnviron(probe string, filter bool) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, childProbeEnv+"=") && !strings.HasPrefix(kv, childFilterEnv+"=") {
			env = append(env, kv)
		}
	}
	state := "off"
	if filter {
		state = "on"
	}
	return append(env, childProbeEnv+"="+probe, childFilterEnv+"="+state)
}

// highBits sets bits the kernel ignores in an int or unsigned int argument.
const highBits = uintptr(1) << 32

var probes = map[string]func() error{
	"getpid": func() error { return sys(unix.SYS_GETPID) },
	"open-file": func() error {
		f, err := os.Open("/proc/self/exe")
		if err != nil {
			return err
		}
		return f.Close()
	},
	"fork-exec-true": func() error {
		return runTrue(nil)
	},
	"exec-echo": func() error {
		return syscall.Exec("/bin/echo", []string{"echo", "result=ok"}, os.Environ())
	},
	"exec-keeps-filter": func() error {
		// The re-exec'd binary installs nothing; it must still be filtered.
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		return syscall.Exec(exe, []string{exe}, childEnviron("ptrace-traceme", false))
	},
	"ptrace-traceme": func() error { return sys(unix.SYS_PTRACE, unix.PTRACE_TRACEME) },
	"process-vm-readv": func() error {
		var src, dst [8]byte
		local := []unix.Iovec{{Base: &dst[0], Len: 8}}
		remote := []unix.RemoteIovec{{Base: uintptr(unsafe.Pointer(&src[0])), Len: 8}}
		_, err := unix.ProcessVMReadv(os.Getpid(), local, remote, 0)
		return err
	},
	"bpf":    func() error { return sys(unix.SYS_BPF, 0, 0, 0) },
	"keyctl": func() error { return sys(unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, ^uintptr(2), 0) }, // KEY_SPEC_SESSION_KEYRING
	"userfaultfd": func() error {
		return sys(unix.SYS_USERFAULTFD, unix.O_CLOEXEC)
	},
	"io-uring-setup": func() error {
		var params [120]byte // struct io_uring_params
		return sys(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params)))
	},
	"mount":   func() error { return unix.Mount("none", "/nonexistent-airlock-seccomp-test", "tmpfs", 0, "") },
	"chroot":  func() error { return unix.Chroot("/") },
	"setns":   func() error { return sys(unix.SYS_SETNS, ^uintptr(0), 0) },
	"unshare": func() error { return sys(unix.SYS_UNSHARE, unix.CLONE_NEWUSER) },
	"unshare-newuser-child": func() error {
		return runTrue(&syscall.SysProcAttr{Unshareflags: unix.CLONE_NEWUSER})
	},
	"clone-newuser-child": func() error {
		return runTrue(&syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWUSER})
	},
	"unshare-newuts-child": func() error {
		return runTrue(&syscall.SysProcAttr{Unshareflags: unix.CLONE_NEWUTS | unix.CLONE_NEWIPC})
	},
	"clone3":                  func() error { return sys(unix.SYS_CLONE3, 0, 0) },
	"ioctl-tiocsti":           func() error { return ptmxIoctl(unix.TIOCSTI) },
	"ioctl-tiocsti-high-bits": func() error { return ptmxIoctl(unix.TIOCSTI | highBits) },
	"ioctl-tioclinux":         func() error { return ptmxIoctl(unix.TIOCLINUX) },
	"ioctl-tiocgwinsz":        func() error { return ptmxIoctl(unix.TIOCGWINSZ) },
	"socket-packet":           func() error { return socket(unix.AF_PACKET, unix.SOCK_RAW, 0) },
	"socket-packet-high-bits": func() error { return socket(unix.AF_PACKET|highBits, unix.SOCK_RAW, 0) },
	"socket-vsock":            func() error { return socket(unix.AF_VSOCK, unix.SOCK_STREAM, 0) },
	"socket-netlink-audit":    func() error { return socket(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT) },
	"socket-netlink-route":    func() error { return socket(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE) },
	"socket-inet":             func() error { return socket(unix.AF_INET, unix.SOCK_STREAM, 0) },
	"socket-inet6":            func() error { return socket(unix.AF_INET6, unix.SOCK_DGRAM, 0) },
	"socket-unix":             func() error { return socket(unix.AF_UNIX, unix.SOCK_STREAM, 0) },
	"socketpair-unix":         func() error { return socketpair(unix.AF_UNIX, unix.SOCK_STREAM) },
	"socketpair-packet":       func() error { return socketpair(unix.AF_PACKET, unix.SOCK_RAW) },
	"personality-query":       func() error { return sys(unix.SYS_PERSONALITY, 0xffffffff) },
	"personality-linux":       func() error { return sys(unix.SYS_PERSONALITY, 0) },
	"personality-linux32":     func() error { return sys(unix.SYS_PERSONALITY, 0x0008) }, // PER_LINUX32
	"x32-getpid":              func() error { return sys(x32SyscallBit | unix.SYS_GETPID) },
	"install-without-nnp": func() error {
		p, err := Build(runtime.GOARCH)
		if err != nil {
			return err
		}
		if err := Install(p); err != nil {
			return err
		}
		return errors.New("installed without no_new_privs")
	},
}

// runProbe runs probe in a fresh child and returns its result, or the name
// of the signal that killed it.
func runProbe(t *testing.T, probe string, filter bool) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(exe)
	cmd.Env = childEnviron(probe, filter)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if cmd.ProcessState != nil {
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return unix.SignalName(ws.Signal())
		}
	}
	if err != nil {
		t.Fatalf("child %s (filter %v): %v\nstderr: %s", probe, filter, err, stderr.Bytes())
	}
	for _, line := range strings.Split(stdout.String(), "\n") {
		if r, ok := strings.CutPrefix(line, "result="); ok {
			return r
		}
	}
	t.Fatalf("child %s (filter %v) printed no result\nstdout: %s\nstderr: %s", probe, filter, stdout.Bytes(), stderr.Bytes())
	return ""
}

// matches reports whether got is want, or, if want is "!X", anything but X.
func matches(got, want string) bool {
	if not, ok := strings.CutPrefix(want, "!"); ok {
		return got != not
	}
	return got == want
}

func TestFilterOnKernel(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the controls open packet sockets and user namespaces without the filter")
	}
	if ok, reason := Available(); !ok {
		t.Skip("seccomp unavailable:", reason)
	}
	tests := []struct {
		probe    string
		filtered string // result with the filter installed
		control  string // result without it; "!X" means anything but X
		needs    string // if set, a control that does not match skips: the machine lacks this
	}{
		{probe: "getpid", filtered: "ok", control: "ok"},
		{probe: "open-file", filtered: "ok", control: "ok"},
		{probe: "fork-exec-true", filtered: "ok", control: "ok"},
		{probe: "exec-echo", filtered: "ok", control: "ok"},
		{probe: "exec-keeps-filter", filtered: "EPERM", control: "ok"},
		{probe: "ptrace-traceme", filtered: "EPERM", control: "ok"},
		{probe: "process-vm-readv", filtered: "EPERM", control: "ok"},
		{probe: "bpf", filtered: "EPERM", control: "!EPERM"},
		{probe: "keyctl", filtered: "EPERM", control: "ok", needs: "CONFIG_KEYS"},
		{probe: "userfaultfd", filtered: "EPERM", control: "ok", needs: "CONFIG_USERFAULTFD"},
		{probe: "io-uring-setup", filtered: "EPERM", control: "ok", needs: "io_uring enabled (kernel.io_uring_disabled=0)"},
		{probe: "mount", filtered: "EPERM", control: "ENOENT"},
		{probe: "chroot", filtered: "EPERM", control: "ok"},
		{probe: "setns", filtered: "EPERM", control: "EBADF"},
		// In-process unshare of a user namespace fails in any multithreaded
		// process; the forked children below show it can succeed.
		{probe: "unshare", filtered: "EPERM", control: "EINVAL"},
		{probe: "unshare-newuser-child", filtered: "EPERM", control: "ok", needs: "user namespaces"},
		{probe: "clone-newuser-child", filtered: "EPERM", control: "ok", needs: "user namespaces"},
		{probe: "unshare-newuts-child", filtered: "ok", control: "ok"},
		{probe: "clone3", filtered: "ENOSYS", control: "EINVAL"},
		{probe: "ioctl-tiocsti", filtered: "EPERM", control: "ok", needs: "a pty from /dev/ptmx"},
		{probe: "ioctl-tiocsti-high-bits", filtered: "EPERM", control: "ok", needs: "a pty from /dev/ptmx"},
		{probe: "ioctl-tioclinux", filtered: "EPERM", control: "!EPERM"},
		{probe: "ioctl-tiocgwinsz", filtered: "ok", control: "ok", needs: "a pty from /dev/ptmx"},
		{probe: "socket-packet", filtered: "EAFNOSUPPORT", control: "ok", needs: "CONFIG_PACKET"},
		{probe: "socket-packet-high-bits", filtered: "EAFNOSUPPORT", control: "ok", needs: "CONFIG_PACKET"},
		{probe: "socket-vsock", filtered: "EAFNOSUPPORT", control: "ok", needs: "CONFIG_VSOCKETS"},
		{probe: "socket-netlink-audit", filtered: "EAFNOSUPPORT", control: "ok", needs: "CONFIG_AUDIT"},
		{probe: "socket-netlink-route", filtered: "ok", control: "ok"},
		{probe: "socket-inet", filtered: "ok", control: "ok"},
		{probe: "socket-inet6", filtered: "ok", control: "ok", needs: "IPv6"},
		{probe: "socket-unix", filtered: "ok", control: "ok"},
		{probe: "socketpair-unix", filtered: "ok", control: "ok"},
		{probe: "socketpair-packet", filtered: "EAFNOSUPPORT", control: "!EAFNOSUPPORT", needs: "CONFIG_PACKET"},
		{probe: "personality-query", filtered: "ok", control: "ok"},
		{probe: "personality-linux", filtered: "ok", control: "ok"},
		{probe: "personality-linux32", filtered: "EPERM", control: "ok"},
	}
	if runtime.GOARCH == "amd64" {
		// Without the filter the kernel answers ENOSYS, or runs getpid if
		// it was built with the x32 ABI; with it, the process dies.
		tests = append(tests, struct{ probe, filtered, control, needs string }{
			probe: "x32-getpid", filtered: "SIGSYS", control: "!SIGSYS"})
	}
	for _, tt := range tests {
		t.Run(tt.probe, func(t *testing.T) {
			t.Parallel()
			if got := runProbe(t, tt.probe, false); !matches(got, tt.control) {
				if tt.needs != "" {
					t.Skipf("control without the filter got %s, want %s: this machine lacks %s", got, tt.control, tt.needs)
				}
				t.Fatalf("control without the filter got %s, want %s", got, tt.control)
			}
			if got := runProbe(t, tt.probe, true); got != tt.filtered {
				t.Errorf("with the filter got %s, want %s", got, tt.filtered)
			}
		})
	}
}

func TestInstallNeedsNoNewPrivs(t *testing.T) {
	got := runProbe(t, "install-without-nnp", false)
	if !strings.HasPrefix(got, "seccomp: install filter: no_new_privs is not set") {
		t.Errorf("Install without no_new_privs: got %q", got)
	}
}

func TestInstallRejectsBadPrograms(t *testing.T) {
	// Both fail before any syscall, so they are safe in the test process.
	other := "arm64"
	if runtime.GOARCH == "arm64" {
		other = "amd64"
	}
	foreign, err := Build(other)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []Program{foreign, {Arch: runtime.GOARCH}} {
		if err := Install(p); err == nil || !strings.HasPrefix(err.Error(), "seccomp: install filter: ") {
			t.Errorf("Install(%s program of %d instructions) = %v, want an install filter error", p.Arch, len(p.Filter), err)
		}
	}
}

func TestBuildStartsWithArchCheck(t *testing.T) {
	for arch, audit := range map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64} {
		p, err := Build(arch)
		if err != nil {
			t.Fatalf("Build(%s): %v", arch, err)
		}
		f := p.Filter
		if p.Arch != arch || len(f) < 3 {
			t.Fatalf("Build(%s) = %s program of %d instructions", arch, p.Arch, len(f))
		}
		if f[0] != (unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: offArch}) {
			t.Errorf("%s: first instruction %+v does not load seccomp_data.arch", arch, f[0])
		}
		if f[1].Code != unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K || f[1].K != audit || f[1].Jt != 0 {
			t.Errorf("%s: second instruction %+v does not continue only on arch %#x", arch, f[1], audit)
		}
		if kill := f[2+int(f[1].Jf)]; kill != (unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_KILL_PROCESS}) {
			t.Errorf("%s: wrong arch goes to %+v, want KILL_PROCESS", arch, kill)
		}
		t.Logf("%s: %d instructions", arch, len(f))
	}
}

func TestBuildUnsupportedArch(t *testing.T) {
	for _, arch := range []string{"mips", "386", "arm", ""} {
		if _, err := Build(arch); !errors.Is(err, ErrUnsupportedArch) {
			t.Errorf("Build(%q) error = %v, want ErrUnsupportedArch", arch, err)
		}
	}
}

func TestSysnumsMatchXSys(t *testing.T) {
	spec := archs[runtime.GOARCH]
	for _, s := range sysnums {
		want, ok := xsysNumbers[s.name]
		if got := spec.column(s); got != absent && (!ok || uintptr(got) != want) {
			t.Errorf("%s on %s: table has %d, x/sys has %d (known %v)", s.name, runtime.GOARCH, got, want, ok)
		} else if got == absent && ok {
			t.Errorf("%s on %s: table says absent, x/sys has %d", s.name, runtime.GOARCH, want)
		}
	}
}

func TestAvailableAgreesWithProc(t *testing.T) {
	ok, reason := Available()
	t.Logf("Available() = %v, %q", ok, reason)
	b, err := os.ReadFile("/proc/sys/kernel/seccomp/actions_avail")
	if err != nil {
		t.Skip("no actions_avail to compare with:", err)
	}
	have := " " + strings.TrimSpace(string(b)) + " "
	want := strings.Contains(have, " kill_process ") && strings.Contains(have, " errno ")
	if ok != want {
		t.Errorf("Available() = %v, %q; actions_avail is %q", ok, reason, strings.TrimSpace(string(b)))
	}
}

func TestBlocked(t *testing.T) {
	text := strings.Join(Blocked(), "\n")
	for _, want := range []string{"ptrace", "io_uring_setup", "CLONE_NEWUSER", "clone3", "TIOCSTI", "NETLINK_ROUTE", "killed"} {
		if !strings.Contains(text, want) {
			t.Errorf("Blocked() does not mention %s:\n%s", want, text)
		}
	}
	if hasIopl := strings.Contains(text, "iopl"); hasIopl != (runtime.GOARCH == "amd64") {
		t.Errorf("Blocked() mentions iopl = %v on %s", hasIopl, runtime.GOARCH)
	}
}
