//go:build linux

package seccomp

// Set-user-ID and set-group-ID bits (S_ISUID, S_ISGID). A file the
// sandbox leaves in the workspace with either bit, owned by root, would
// give any local user root after the run (the sandbox's root is the
// host's root when airlock runs as root), so no call may set them.
const setIDBits = 0o4000 | 0o2000

// oCreatOrTmpfile is O_CREAT|O_TMPFILE's directory-less part: the open
// flags that make the mode argument count. O_CREAT is 0o100 on both
// architectures; O_TMPFILE is __O_TMPFILE (0o20000000) plus O_DIRECTORY,
// and testing its own bit is enough.
const oCreatOrTmpfile = 0o100 | 0o20000000

// modeRules maps each syscall whose mode argument the filter reads to
// the check for it: the mode's argument, or first the open flags that
// make the mode count.
var modeRules = []struct {
	name  string
	check label
}{
	{"chmod", "mode-arg1"},
	{"fchmod", "mode-arg1"},
	{"fchmodat", "mode-arg2"},
	{"fchmodat2", "mode-arg2"},
	{"mkdir", "mode-arg1"},
	{"mkdirat", "mode-arg2"},
	{"mknod", "mode-arg1"},
	{"mknodat", "mode-arg2"},
	{"creat", "mode-arg1"},
	{"open", "open-flags1"},     // open(path, flags, mode)
	{"openat", "openat-flags2"}, // openat(dirfd, path, flags, mode)
}

// modeConditional is what the mode rules refuse, for Blocked.
var modeConditional = []string{
	"chmod, fchmod, fchmodat, fchmodat2, mkdir, mkdirat, mknod, mknodat, creat, and open and openat with O_CREAT or O_TMPFILE, when the mode has S_ISUID or S_ISGID: EPERM (no set-id files for other users to run)",
	"openat2: ENOSYS (its mode is in memory the filter cannot read; libc and Go fall back to openat)",
}

// emitModeDispatch emits, into the chain of syscall-number tests, the
// jumps to the mode checks; the accumulator holds the syscall number.
func emitModeDispatch(a *assembler, spec archSpec) {
	for _, r := range modeRules {
		if n, ok := lookupSysnum(spec, r.name); ok {
			a.jumpEq(n, r.check, next)
		}
	}
	if n, ok := lookupSysnum(spec, "openat2"); ok {
		a.jumpEq(n, lENOSYS, next)
	}
}

// emitModeChecks emits the blocks the dispatch jumps to. They end in
// lAllow or lEPERM. The kernel reads modes and flags as 32-bit values, so
// only the low words decide.
func emitModeChecks(a *assembler) {
	a.mark("open-flags1")
	a.loadWord(offArgLow(1))
	a.jumpSet(oCreatOrTmpfile, "mode-arg2", lAllow)
	a.mark("openat-flags2")
	a.loadWord(offArgLow(2))
	a.jumpSet(oCreatOrTmpfile, "mode-arg3", lAllow)
	a.mark("mode-arg1")
	a.loadWord(offArgLow(1))
	a.jumpSet(setIDBits, lEPERM, lAllow)
	a.mark("mode-arg2")
	a.loadWord(offArgLow(2))
	a.jumpSet(setIDBits, lEPERM, lAllow)
	a.mark("mode-arg3")
	a.loadWord(offArgLow(3))
	a.jumpSet(setIDBits, lEPERM, lAllow)
}
