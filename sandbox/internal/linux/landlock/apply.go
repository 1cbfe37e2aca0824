package landlock

import (
	"errors"
	"fmt"
	"path"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fdBatchLimit bounds the descriptors addRules keeps open to close in
// batches: below 64, the size of a process's first descriptor table, so
// it never grows (growing the table of a threaded process waits for an
// RCU grace period, milliseconds).
const fdBatchLimit = 48

// addRules adds rules to the ruleset, in order, each cut to what the
// kernel handles and to what its file type can carry. It returns the
// rules skipped, each as "path: why". Typed rules whose directory is the
// previous one's share one descriptor of it (the supervisor's deny
// expansion lists a directory's entries together), and the rules'
// descriptors are closed a run of consecutive numbers at a time.
func addRules(ruleset int, rules []Rule, handled uint64) ([]string, error) {
	var skipped []string
	var pending fdBatch
	defer pending.close()
	parent := openParent{fd: -1}
	defer parent.close()
	for _, r := range rules {
		fd, dir, why, err := openRule(&parent, r)
		if err != nil {
			return nil, fmt.Errorf("landlock: add rule for %s: %w", r.Path, err)
		}
		if why != "" {
			skipped = append(skipped, r.Path+": "+why)
			continue
		}
		err = addRule(ruleset, fd, dir, r, handled)
		pending.add(fd)
		if err != nil {
			return nil, fmt.Errorf("landlock: add rule for %s: %w", r.Path, err)
		}
	}
	return skipped, nil
}

// openRule opens r's path O_PATH and says whether it is a directory, or
// why the rule is skipped.
func openRule(parent *openParent, r Rule) (fd int, dir bool, why string, err error) {
	if !path.IsAbs(r.Path) {
		return -1, false, "", errors.New("not an absolute path")
	}
	if r.Type == TypeUnknown || r.Path == "/" {
		// O_PATH opens without read permission and follows symlinks, so
		// a rule on a symlink grants its target, as the kernel resolves
		// at access time.
		fd, err := unix.Open(r.Path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if missing(err) {
			return -1, false, "does not exist", nil
		}
		if err != nil {
			return -1, false, "", fmt.Errorf("open: %w", err)
		}
		var s unix.Stat_t
		if err := unix.Fstat(fd, &s); err != nil {
			unix.Close(fd)
			return -1, false, "", fmt.Errorf("stat: %w", err)
		}
		return fd, s.Mode&unix.S_IFMT == unix.S_IFDIR, "", nil
	}
	dfd, err := parent.open(path.Dir(r.Path))
	if missing(err) {
		return -1, false, "does not exist", nil
	}
	if err != nil {
		return -1, false, "", fmt.Errorf("open its directory: %w", err)
	}
	fd, err = unix.Openat2(dfd, path.Base(r.Path), &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS,
	})
	switch {
	case missing(err):
		return -1, false, "does not exist", nil
	case errors.Is(err, unix.ELOOP):
		return -1, false, "a symlink since the plan; not followed", nil
	case err != nil:
		return -1, false, "", fmt.Errorf("open: %w", err)
	}
	return fd, r.Type == TypeDir, "", nil
}

// addRule adds the rule for r on fd, a descriptor of r's path, which is
// a directory if dir. A planned directory that is now a file (the
// kernel refuses a directory's rights on it) is looked at and its rule
// cut to a file's rights.
func addRule(ruleset, fd int, dir bool, r Rule, handled uint64) error {
	access := r.Access & handled
	if !dir {
		access &= accessFile
	}
	if access == 0 {
		// Only rights this kernel does not handle were asked for (IoctlDev
		// before ABI 5), and unhandled rights need no rule to be allowed.
		return nil
	}
	err := landlockAddRule(ruleset, fd, access)
	if errors.Is(err, unix.EINVAL) && dir && r.Type == TypeDir {
		var s unix.Stat_t
		if serr := unix.Fstat(fd, &s); serr != nil {
			return fmt.Errorf("stat: %w", serr)
		}
		if s.Mode&unix.S_IFMT != unix.S_IFDIR {
			return addRule(ruleset, fd, false, r, handled)
		}
	}
	return err
}

func landlockAddRule(ruleset, fd int, access uint64) error {
	attr := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset),
		unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// openParent is the directory of the last typed rule, kept open for its
// siblings.
type openParent struct {
	path string
	fd   int
	err  error
}

// open returns a descriptor of the directory dir, following symlinks as
// a rule on dir itself would.
func (p *openParent) open(dir string) (int, error) {
	if p.path == dir && (p.fd >= 0 || p.err != nil) {
		return p.fd, p.err
	}
	p.close()
	p.path = dir
	p.fd, p.err = unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if p.err != nil {
		p.fd = -1
	}
	return p.fd, p.err
}

func (p *openParent) close() {
	if p.fd >= 0 {
		unix.Close(p.fd)
	}
	p.fd, p.err = -1, nil
}

// fdBatch is descriptors to close, kept below fdBatchLimit.
type fdBatch []int

func (b *fdBatch) add(fd int) {
	if fd >= fdBatchLimit {
		b.close()
		unix.Close(fd)
		return
	}
	*b = append(*b, fd)
}

// close closes every descriptor of the batch, one close_range for each
// run of consecutive numbers (the kernel hands out the lowest free
// number, so the rules' descriptors mostly are one run). A range holds
// only numbers of the batch, so nothing else is closed.
func (b *fdBatch) close() {
	fds := *b
	for i := 0; i < len(fds); {
		j := i + 1
		for j < len(fds) && fds[j] == fds[j-1]+1 {
			j++
		}
		if j-i == 1 {
			unix.Close(fds[i])
		} else if err := unix.CloseRange(uint(fds[i]), uint(fds[j-1]), 0); err != nil {
			for _, fd := range fds[i:j] {
				unix.Close(fd)
			}
		}
		i = j
	}
	*b = fds[:0]
}
