package linux

import (
	"encoding/binary"
	"errors"
)

// The create guard's wire format, between the supervisor (the sandbox
// package's create guard) and the guard proxy in the sandbox
// (guardproxy.go). One request is one SOCK_SEQPACKET message: a fixed
// header, the path bytes, and as SCM_RIGHTS the socket the answer goes
// back on followed by the directory descriptors the header says are
// there. One answer is one message on that socket: the header below and,
// for an open that succeeded, the new descriptor.

// GuardConfig is what the guard proxy protects. The supervisor fills
// Roots and Absent; the helper adds PrivateDevs and Rlimits.
type GuardConfig struct {
	// Roots are the device and inode of each writable tree, whose mode
	// and owner no chmod or chown may change.
	Roots [][2]uint64 `json:"roots,omitempty"`
	// Absent are names that did not exist at the start in directories
	// that did (a repository's missing hooks directory, an include
	// target), which no call may create.
	Absent []GuardName `json:"absent,omitempty"`
	// Held are the directories that existed at the start on the way from
	// a writable tree to an Absent name: each may not be made again once
	// gone, nor replaced by a rename (a new include/ would take the
	// absent include target with it).
	Held []GuardName `json:"held,omitempty"`
	// Globs are absolute path globs (internal/pathglob) at which no name
	// may be made: protected wildcard entries ("**/.env", from a deny
	// Edit(.env) rule). A name is matched by the path of its directory
	// in the view when the call is carried out.
	Globs []string `json:"globs,omitempty"`
	// PrivateDevs are the filesystems only the sandbox sees (its scratch
	// tmpfs behind HOME, /tmp and /dev/shm, its /dev): a .git there is
	// invisible to the host, so it may be made.
	PrivateDevs []uint64 `json:"private_devs,omitempty"`
	// GitDirs are the device and inode of each repository's git
	// directory at the start. A HEAD, which makes a directory a git
	// directory for host git whatever its name (git init --bare), may be
	// made only beneath one of them or on a private filesystem.
	GitDirs [][2]uint64 `json:"git_dirs,omitempty"`
	// Names may not be made anywhere the host can see (the profile's
	// **/NAME entries: sub/.vscode, sub/.envrc), like .git.
	Names []string `json:"names,omitempty"`
	// Workspace is the workspace's path (the same in the view): below
	// its top, a directory named one of Names holds its files as the
	// name itself is held (sub/.vscode/tasks.json).
	Workspace string `json:"workspace,omitempty"`
	// Home is the host user's home, for "~" in a repository's
	// core.hooksPath and include paths.
	Home string `json:"home,omitempty"`
	// GlobalHooks are the hooks directories the host's global and
	// system git configs name (core.hooksPath): a relative one is taken
	// in every repository's working tree, as git does.
	GlobalHooks []string `json:"global_hooks,omitempty"`
	// LinksBornBefore, when not 0, is the start of the run (Unix ns): a
	// regular file with more than one link born before it (or of unknown
	// birth) may not change mode or owner, since the supervisor judges
	// at open whether such a file is a secret by its mode.
	LinksBornBefore int64    `json:"links_born_before,omitempty"`
	Rlimits         []Rlimit `json:"rlimits,omitempty"`
}

// GuardName is the entry Name in the directory Dir (device, inode).
type GuardName struct {
	Dir  [2]uint64 `json:"dir"`
	Name string    `json:"name"`
}

// Guard operations.
const (
	GuardMkdir    = 1 + iota // Dir1/Path1, Mode
	GuardMknod               // Dir1/Path1, Mode, Dev
	GuardSymlink             // Path1 is the link's text; Dir2/Path2 the new name
	GuardLink                // Dir1/Path1 to Dir2/Path2, Flags (AT_SYMLINK_FOLLOW, AT_EMPTY_PATH)
	GuardRename              // Dir1/Path1 to Dir2/Path2, Flags (RENAME_*)
	GuardOpen                // Dir1/Path1, Flags (creating, writing or truncating), Mode; answers a descriptor
	GuardChmod               // Dir1/Path1 (Dir1 itself with AT_EMPTY_PATH), Mode, Flags
	GuardChown               // Dir1/Path1 (Dir1 itself with AT_EMPTY_PATH), UID, GID, Flags
	GuardTruncate            // Dir1/Path1 (final symlink followed), Dev is the length
)

// Request header flags: which directory descriptors follow the answer
// socket in SCM_RIGHTS. A path without one is absolute.
const (
	GuardHasDir1 = 1 << iota
	GuardHasDir2
	// GuardOnFD: a chmod or chown acts on Dir1 itself, as fchmod and
	// fchown do (an O_PATH descriptor fails with EBADF).
	GuardOnFD
)

// GuardRequest is one stopped call, as the supervisor read it.
type GuardRequest struct {
	Op, Flags, Mode uint32
	UID, GID        uint32 // -1 (all ones) leaves one as it is
	Dirs            uint32 // GuardHasDir1, GuardHasDir2
	// PID and TID are the caller's ids in the sandbox's pid namespace:
	// /proc/self and /proc/thread-self in its paths mean them.
	PID, TID     int32
	Dev          uint64
	Path1, Path2 []byte
}

const guardHeaderLen = 48

// GuardMaxPath is the longest path a request carries (PATH_MAX, with its
// NUL).
const GuardMaxPath = 4096

// Marshal encodes r.
func (r *GuardRequest) Marshal() []byte {
	b := make([]byte, guardHeaderLen, guardHeaderLen+len(r.Path1)+len(r.Path2))
	le := binary.LittleEndian
	le.PutUint32(b[0:], r.Op)
	le.PutUint32(b[4:], r.Flags)
	le.PutUint32(b[8:], r.Mode)
	le.PutUint32(b[12:], r.UID)
	le.PutUint32(b[16:], r.GID)
	le.PutUint32(b[20:], r.Dirs)
	le.PutUint32(b[24:], uint32(r.PID))
	le.PutUint32(b[28:], uint32(r.TID))
	le.PutUint32(b[32:], uint32(len(r.Path1)))
	le.PutUint32(b[36:], uint32(len(r.Path2)))
	le.PutUint64(b[40:], r.Dev)
	b = append(b, r.Path1...)
	return append(b, r.Path2...)
}

// UnmarshalGuardRequest decodes and checks a request.
func UnmarshalGuardRequest(b []byte) (*GuardRequest, error) {
	if len(b) < guardHeaderLen {
		return nil, errors.New("short request")
	}
	le := binary.LittleEndian
	r := &GuardRequest{
		Op: le.Uint32(b[0:]), Flags: le.Uint32(b[4:]), Mode: le.Uint32(b[8:]),
		UID: le.Uint32(b[12:]), GID: le.Uint32(b[16:]), Dirs: le.Uint32(b[20:]),
		PID: int32(le.Uint32(b[24:])), TID: int32(le.Uint32(b[28:])), Dev: le.Uint64(b[40:]),
	}
	n1, n2 := uint64(le.Uint32(b[32:])), uint64(le.Uint32(b[36:]))
	if n1 > GuardMaxPath || n2 > GuardMaxPath || uint64(len(b)) != guardHeaderLen+n1+n2 {
		return nil, errors.New("bad path lengths")
	}
	if r.Op < GuardMkdir || r.Op > GuardTruncate || r.Dirs&^(GuardHasDir1|GuardHasDir2|GuardOnFD) != 0 {
		return nil, errors.New("bad operation")
	}
	r.Path1 = b[guardHeaderLen : guardHeaderLen+n1]
	r.Path2 = b[guardHeaderLen+n1:]
	for _, p := range [][]byte{r.Path1, r.Path2} {
		for _, c := range p {
			if c == 0 {
				return nil, errors.New("NUL in a path")
			}
		}
	}
	return r, nil
}

// GuardAnswer is the proxy's answer: the call's errno (0: done), and
// with Refused the name it refused (a protected one), which may be a
// symlink's target rather than the path asked for.
type GuardAnswer struct {
	Errno   int32
	Refused bool
	Name    []byte
}

// Marshal encodes a.
func (a *GuardAnswer) Marshal() []byte {
	b := make([]byte, 8, 8+len(a.Name))
	binary.LittleEndian.PutUint32(b[0:], uint32(a.Errno))
	if a.Refused {
		b[4] = 1
	}
	return append(b, a.Name...)
}

// UnmarshalGuardAnswer decodes an answer.
func UnmarshalGuardAnswer(b []byte) (GuardAnswer, error) {
	if len(b) < 8 || len(b) > 8+GuardMaxPath {
		return GuardAnswer{}, errors.New("bad answer")
	}
	return GuardAnswer{Errno: int32(binary.LittleEndian.Uint32(b)), Refused: b[4] == 1, Name: b[8:]}, nil
}
