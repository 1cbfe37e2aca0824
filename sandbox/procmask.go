package sandbox

import "github.com/airlockhq/airlock/sandbox/internal/linux"

// procMasked are the entries of the sandbox's fresh /proc that describe
// the host's kernel rather than the sandbox's processes. Each is hidden
// by an empty, unreadable file or directory mounted over it (a "mask"
// mount, as for deny entries): a mask that cannot be placed where the
// entry exists fails the run's setup. Entries this kernel does not have
// are skipped.
//
// It is the list container runtimes mask (Docker's default), plus what
// else leaks kernel layout, other users' keys or host activity:
//
//   - kernel layout: kallsyms (symbol names even where addresses read as
//     zero), kcore, modules, config.gz, iomem, ioports, slabinfo,
//     vmallocinfo, pagetypeinfo, kpageflags, kpagecount, kpagecgroup
//   - secrets and logs: keys, key-users, kmsg
//   - host activity and timing side channels: interrupts, softirqs,
//     timer_list, timer_stats, sched_debug, latency_stats
//   - host hardware: acpi, asound, scsi
//   - sysrq-trigger (also read-only, with sys, irq, bus and fs)
//
// Left readable because ordinary tools need them and they describe
// nothing beyond what the sandbox can measure itself: cpuinfo, meminfo,
// stat, loadavg, uptime, version, mounts, self.
var procMasked = []string{
	"/proc/kallsyms", "/proc/kcore", "/proc/modules", "/proc/config.gz",
	"/proc/iomem", "/proc/ioports", "/proc/slabinfo", "/proc/vmallocinfo",
	"/proc/pagetypeinfo", "/proc/kpageflags", "/proc/kpagecount", "/proc/kpagecgroup",
	"/proc/keys", "/proc/key-users", "/proc/kmsg",
	"/proc/interrupts", "/proc/softirqs", "/proc/timer_list", "/proc/timer_stats",
	"/proc/sched_debug", "/proc/latency_stats",
	"/proc/acpi", "/proc/asound", "/proc/scsi",
	"/proc/sysrq-trigger",
}

// procMounts is the sandbox's /proc: fresh for its pid namespace, the
// kernel's tunables read-only, the host's kernel details masked.
func procMounts() []linux.Mount {
	mounts := []linux.Mount{{Kind: linux.MountProc, Target: "/proc"}}
	for _, sub := range []string{"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"} {
		mounts = append(mounts, linux.Mount{Kind: linux.MountReadOnly, Target: sub, Optional: true})
	}
	for _, m := range procMasked {
		mounts = append(mounts, linux.Mount{Kind: linux.MountMask, Target: m})
	}
	return mounts
}
