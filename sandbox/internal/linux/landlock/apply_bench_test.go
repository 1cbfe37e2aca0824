package landlock

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BenchmarkAddRules adds a rule for every entry of /etc, as the deny
// expansion plans them, to a fresh ruleset: "untyped" as the helper did
// before the plan (each path opened from the root, an fstat, a close),
// "planned" with the types the expansion's walk saw (one open of /etc,
// each entry opened beneath it, no fstat, the descriptors closed in
// runs).
func BenchmarkAddRules(b *testing.B) {
	abi := ABI()
	if abi == 0 {
		b.Skip("no Landlock")
	}
	ents, err := os.ReadDir("/etc")
	if err != nil {
		b.Fatal(err)
	}
	var untyped, planned []Rule
	for _, e := range ents {
		if e.Type()&os.ModeSymlink != 0 {
			continue
		}
		p := filepath.Join("/etc", e.Name())
		typ := TypeFile
		if e.IsDir() {
			typ = TypeDir
		}
		untyped = append(untyped, Rule{Path: p, Access: accessRead | accessExec})
		planned = append(planned, Rule{Path: p, Access: accessRead | accessExec, Type: typ})
	}
	handled := handledFS(abi)
	for _, bc := range []struct {
		name  string
		rules []Rule
	}{{"untyped", untyped}, {"planned", planned}} {
		b.Run(bc.name, func(b *testing.B) {
			attr := rulesetAttr{handledAccessFS: handled}
			for b.Loop() {
				fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
				if errno != 0 {
					b.Fatal(errno)
				}
				if _, err := addRules(int(fd), bc.rules, handled); err != nil {
					b.Fatal(err)
				}
				unix.Close(int(fd))
			}
			b.ReportMetric(float64(len(bc.rules)), "rules")
		})
	}
}
