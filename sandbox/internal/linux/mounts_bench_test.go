package linux

import (
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// defaultView is the mount list of `airlock run --workspace WS` with the
// default profile (read from a helper's config), without the id-mapped
// trees the supervisor hands over: /usr and /etc are cloned here.
func defaultView(ws string) []Mount {
	const gib = 1 << 30
	m := []Mount{
		{Kind: MountSymlink, Source: "usr/bin", Target: "/bin"},
		{Kind: MountBind, Source: "/etc", Target: "/etc", ReadOnly: true, Optional: true},
		{Kind: MountSymlink, Source: "usr/lib", Target: "/lib"},
		{Kind: MountBind, Source: "/lib32", Target: "/lib32", ReadOnly: true, Optional: true},
		{Kind: MountSymlink, Source: "usr/lib64", Target: "/lib64"},
		{Kind: MountBind, Source: "/libx32", Target: "/libx32", ReadOnly: true, Optional: true},
		{Kind: MountSymlink, Source: "usr/sbin", Target: "/sbin"},
		{Kind: MountBind, Source: "/usr", Target: "/usr", ReadOnly: true, Optional: true},
		{Kind: MountScratch, Source: "home", Target: "/root", Size: gib, Inodes: 131072, Mode: 0o700},
		{Kind: MountScratch, Source: "tmp", Target: "/tmp", Size: gib, Inodes: 131072, Mode: 0o1777},
		{Kind: MountBind, Source: ws, Target: ws},
	}
	for _, p := range []string{"/etc/gshadow", "/etc/gshadow-", "/etc/security/opasswd", "/etc/shadow", "/etc/shadow-", "/etc/ssl/private"} {
		m = append(m, Mount{Kind: MountMask, Target: p})
	}
	m = append(m, Mount{Kind: MountTmpfs, Target: "/dev", Size: 1 << 20, Inodes: 1024, Mode: 0o755})
	for _, d := range []string{"null", "zero", "full", "random", "urandom", "tty"} {
		m = append(m, Mount{Kind: MountBind, Source: "/dev/" + d, Target: "/dev/" + d, Optional: true})
	}
	m = append(m,
		Mount{Kind: MountDevpts, Target: "/dev/pts"},
		Mount{Kind: MountSymlink, Source: "pts/ptmx", Target: "/dev/ptmx"},
		Mount{Kind: MountScratch, Source: "shm", Target: "/dev/shm", Size: gib, Inodes: 131072, Mode: 0o1777},
		Mount{Kind: MountSymlink, Source: "/proc/self/fd", Target: "/dev/fd"},
		Mount{Kind: MountSymlink, Source: "/proc/self/fd/0", Target: "/dev/stdin"},
		Mount{Kind: MountSymlink, Source: "/proc/self/fd/1", Target: "/dev/stdout"},
		Mount{Kind: MountSymlink, Source: "/proc/self/fd/2", Target: "/dev/stderr"},
		Mount{Kind: MountProc, Target: "/proc"},
	)
	for _, p := range []string{"sys", "sysrq-trigger", "irq", "bus", "fs"} {
		m = append(m, Mount{Kind: MountReadOnly, Target: "/proc/" + p, Optional: true})
	}
	for _, p := range []string{"kallsyms", "kcore", "modules", "config.gz", "iomem", "ioports", "slabinfo",
		"vmallocinfo", "pagetypeinfo", "kpageflags", "kpagecount", "kpagecgroup", "keys", "key-users", "kmsg",
		"interrupts", "softirqs", "timer_list", "timer_stats", "sched_debug", "latency_stats", "acpi", "asound",
		"scsi", "sysrq-trigger"} {
		m = append(m, Mount{Kind: MountMask, Target: "/proc/" + p})
	}
	return m
}

// BenchmarkMountView builds the default profile's view, pivot_root and
// the old root's detach included, each time on a new thread in a mount
// namespace of its own (the thread ends with it, and the namespace's
// teardown overlaps the next build).
func BenchmarkMountView(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root: each view is built in a mount namespace of its own")
	}
	ws, err := os.MkdirTemp("/tmp", "view-ws")
	if err != nil {
		b.Fatal(err)
	}
	defer os.Remove(ws)
	mounts := defaultView(ws)
	var cpu int64
	for b.Loop() {
		done := make(chan error, 1)
		go func() {
			runtime.LockOSThread()
			var before, after unix.Rusage
			unix.Getrusage(unix.RUSAGE_THREAD, &before)
			if err := unix.Unshare(unix.CLONE_NEWNS | unix.CLONE_FS); err != nil {
				done <- err
				return
			}
			err := buildMountView(mounts, true)
			unix.Getrusage(unix.RUSAGE_THREAD, &after)
			cpu += after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano()
			done <- err
		}()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	// The thread's own CPU (user and system), which other load on the
	// machine moves less than the wall time.
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
}
