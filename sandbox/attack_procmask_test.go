package sandbox_test

import (
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// procLeaks reads each path given (a file's first 4 KiB, a directory's
// names) and prints "PATH LEAKED" for each that gave anything.
const procLeaks = `import os, sys
for p in sys.argv[1:]:
    try:
        if os.path.isdir(p):
            got = len(os.listdir(p))
        else:
            with open(p, "rb") as f:
                got = len(f.read(4096))
    except OSError:
        got = 0
    if got:
        print(p, "LEAKED")
`

// The /proc files that describe the host's kernel (symbol names, slab
// and vmalloc layout, keys, interrupt and timer activity, hardware) must
// read as nothing inside. The control reads them on the host as the same
// user (not /proc/kmsg, which the sandbox masks too: reading it would
// take messages from the host's log, or block); only the ones it can
// read are judged (as uid 65534 the root-only
// ones are unreadable on the host too), and it must read at least one.
func TestAttackReadKernelProcFiles(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	paths := []string{
		"/proc/kallsyms", "/proc/kcore", "/proc/modules", "/proc/config.gz",
		"/proc/iomem", "/proc/ioports", "/proc/slabinfo", "/proc/vmallocinfo",
		"/proc/pagetypeinfo", "/proc/kpageflags", "/proc/kpagecount", "/proc/kpagecgroup",
		"/proc/keys", "/proc/key-users",
		"/proc/interrupts", "/proc/softirqs", "/proc/timer_list", "/proc/timer_stats",
		"/proc/sched_debug", "/proc/latency_stats",
		"/proc/acpi", "/proc/asound", "/proc/scsi",
	}
	host := sb.Host(t, sandboxtest.Probe{Args: sandboxtest.Py(procLeaks, paths...)})
	var readable []string
	for _, line := range strings.Split(host.Stdout, "\n") {
		if p, ok := strings.CutSuffix(line, " LEAKED"); ok {
			readable = append(readable, p)
		}
	}
	if len(readable) == 0 {
		t.Fatalf("control: the host read none of %v; the test proves nothing: %s", paths, host)
	}
	t.Logf("readable on the host: %v", readable)
	o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Py(procLeaks, readable...)})
	if strings.Contains(o.Stdout, "LEAKED") || o.ExitCode != 0 {
		t.Errorf("kernel /proc entries readable in the sandbox: %s", o)
	}
	// The masks hide only these: the sandbox's own processes and the
	// files ordinary tools need still read.
	ok := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Py(procLeaks, "/proc/self/status", "/proc/meminfo", "/proc/cpuinfo", "/proc/version")})
	if n := strings.Count(ok.Stdout, "LEAKED"); n != 4 {
		t.Errorf("ordinary /proc files unreadable in the sandbox (%d of 4 read): %s", n, ok)
	}
}
