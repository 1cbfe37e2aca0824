package linux

import (
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// What the guard proxy holds for what lies above a name, found when a
// call comes instead of by searching the workspace at the start (whose
// cost grew with the workspace, and which stopped at a bound):
//
//   - a directory below the workspace's top named one of the profile's
//     **/NAME entries holds everything in it (sub/.vscode/tasks.json);
//   - the state of a git operation (rebase, am, sequencer, bisect) in a
//     git directory the start did not know is held: host git would go on
//     with it, and only the start's repositories have it journaled;
//   - a hooks directory (core.hooksPath) or include target that the
//     config of a repository above the name names is held, for a
//     repository anywhere: husky's .husky, a project's .githooks; and
//     the hooks directory the host's global config names, in each.

// gitStateNames are the entries of a git directory that hold an
// operation in progress (the sandbox package's list of the same name).
var gitStateNames = map[string]bool{
	"rebase-merge": true, "rebase-apply": true, "sequencer": true,
	"BISECT_LOG": true, "BISECT_START": true, "BISECT_TERMS": true, "BISECT_NAMES": true, "BISECT_RUN": true,
	"BISECT_EXPECTED_REV": true, "BISECT_ANCESTORS_OK": true, "BISECT_FIRST_PARENT": true, "BISECT_HEAD": true,
}

// heldAbove reports whether name in parent (on a writable mount the host
// sees) is held for what lies above it.
func (p *guardProxy) heldAbove(parent int, name string) bool {
	dir, ok := viewPath(parent)
	if !ok {
		return true // a directory the proxy cannot name: refuse
	}
	if dir == "" {
		return false // deleted: nothing can be made in it
	}
	if p.workspace != "" && len(p.names) > 0 && strings.HasPrefix(dir, p.workspace+"/") {
		for _, c := range strings.Split(dir[len(p.workspace)+1:], "/") {
			if p.names[c] {
				return true
			}
		}
	}
	if p.unknownGitState(parent, name, dir) {
		return true
	}
	return p.namedByConfig(parent, name, dir)
}

// viewPath is the path of the directory fd in the view, "" for one that
// was removed; false when it cannot be read.
func viewPath(fd int) (string, bool) {
	var buf [unix.PathMax]byte
	n, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf[:])
	if err != nil || n >= len(buf) {
		return "", false
	}
	dir := string(buf[:n])
	if strings.HasSuffix(dir, " (deleted)") || !strings.HasPrefix(dir, "/") {
		return "", true
	}
	return dir, true
}

// unknownGitState reports whether name in parent (whose path is dir) is,
// or is in, the state of a git operation in a git directory that is not
// one of the start's.
func (p *guardProxy) unknownGitState(parent int, name, dir string) bool {
	if gitStateNames[name] && looksGitDirAt(parent) && !p.gitDirs[idOf(parent)] {
		return true
	}
	switch dir[strings.LastIndexByte(dir, '/')+1:] {
	case "rebase-merge", "rebase-apply", "sequencer":
		up, err := unix.Openat(parent, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return true
		}
		defer unix.Close(up)
		return looksGitDirAt(up) && !p.gitDirs[idOf(up)]
	}
	return false
}

func idOf(fd int) [2]uint64 {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return [2]uint64{}
	}
	return [2]uint64{st.Dev, st.Ino}
}

// namedByConfig reports whether name in parent (whose path is dir), or
// parent itself or a directory above it, is a hooks directory or an
// include target that the config of a repository whose working tree
// holds parent names. The repositories are found by their .git entries
// in the directories from parent up to the root.
func (p *guardProxy) namedByConfig(parent int, name, dir string) bool {
	var chain [][2]uint64
	var targets []string
	path := dir
	cur, err := unix.Openat(parent, ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return true
	}
	for i := 0; i < maxDepth; i++ {
		id := idOf(cur)
		if len(chain) > 0 && id == chain[len(chain)-1] {
			break // the root
		}
		chain = append(chain, id)
		if gitDir := dotGitOf(cur, path); gitDir != "" {
			targets = append(targets, p.configTargets(gitDir, path)...)
			for _, h := range p.globalHooks {
				targets = append(targets, against(path, h))
			}
		}
		up, err := unix.Openat(cur, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		unix.Close(cur)
		if err != nil {
			return true
		}
		cur = up
		if i := strings.LastIndexByte(path, '/'); i > 0 {
			path = path[:i]
		} else {
			path = "/"
		}
	}
	unix.Close(cur)
	self := chain[0]
	for _, t := range targets {
		// The target, or a directory above name, is it.
		if fd, err := unix.Open(t, unix.O_PATH|unix.O_CLOEXEC, 0); err == nil {
			id := idOf(fd)
			unix.Close(fd)
			for _, c := range chain {
				if c == id {
					return true
				}
			}
		}
		// The target is name in parent (absent, or a file).
		i := strings.LastIndexByte(t, '/')
		if i < 0 || t[i+1:] != strings.TrimRight(name, "/") {
			continue
		}
		tdir := t[:i]
		if tdir == "" {
			tdir = "/"
		}
		if fd, err := unix.Open(tdir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
			id := idOf(fd)
			unix.Close(fd)
			if id == self {
				return true
			}
		}
	}
	return false
}

// dotGitOf returns the git directory the .git entry of dir (whose path
// is path) leads to: itself, or a gitfile's "gitdir: DIR"; "" for none.
func dotGitOf(dir int, path string) string {
	var st unix.Stat_t
	if unix.Fstatat(dir, ".git", &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return ""
	}
	self := strings.TrimSuffix(path, "/") + "/.git"
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR, unix.S_IFLNK:
		return self
	case unix.S_IFREG:
		target, ok := strings.CutPrefix(firstLine(dir, ".git"), "gitdir:")
		if !ok {
			return ""
		}
		return against(path, strings.TrimSpace(target))
	}
	return ""
}

// firstLine is the first line of a small file name in dir, trimmed.
func firstLine(dir int, name string) string {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return ""
	}
	defer unix.Close(fd)
	buf := make([]byte, 4096)
	n, _ := unix.Read(fd, buf)
	if n <= 0 {
		return ""
	}
	line, _, _ := strings.Cut(string(buf[:n]), "\n")
	return strings.TrimSpace(line)
}

// against resolves p, from a config or pointer file, against base.
func against(base, p string) string {
	if strings.HasPrefix(p, "/") {
		return p
	}
	return strings.TrimSuffix(base, "/") + "/" + p
}

// configTargets are the hooks directory and include targets that the
// configs of the git directory gitDir (whose working tree is wt) name,
// as absolute paths.
func (p *guardProxy) configTargets(gitDir, wt string) []string {
	files := []string{gitDir + "/config", gitDir + "/config.worktree"}
	if fd, err := unix.Open(gitDir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
		if c := firstLine(fd, "commondir"); c != "" {
			files = append(files, against(gitDir, c)+"/config")
		}
		unix.Close(fd)
	}
	var out []string
	for _, f := range files {
		for _, e := range p.configs.entries(f) {
			v := e.value
			switch {
			case v == "~" || strings.HasPrefix(v, "~/"):
				if p.home == "" {
					continue
				}
				v = p.home + v[1:]
			case e.include:
				v = against(f[:strings.LastIndexByte(f, '/')], v)
			default:
				v = against(wt, v)
			}
			out = append(out, v)
		}
	}
	return out
}

// configEntry is a path a git config names: core.hooksPath, or an
// include's path.
type configEntry struct {
	value   string
	include bool
}

// configCache keeps what each config file names, by its inode and
// change time: the run cannot change a config (the guard refuses), so
// each is read once per run unless the host changes it.
type configCache struct {
	mu    sync.Mutex
	files map[[4]int64][]configEntry
}

func (c *configCache) entries(file string) []configEntry {
	fd, err := unix.Open(file, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size > 1<<20 {
		return nil
	}
	key := [4]int64{int64(st.Dev), int64(st.Ino), st.Ctim.Sec, st.Ctim.Nsec}
	c.mu.Lock()
	got, ok := c.files[key]
	c.mu.Unlock()
	if ok {
		return got
	}
	data := make([]byte, st.Size)
	n, _ := unix.Read(fd, data)
	got = parseConfigPaths(data[:max(n, 0)])
	c.mu.Lock()
	if c.files == nil {
		c.files = map[[4]int64][]configEntry{}
	}
	c.files[key] = got
	c.mu.Unlock()
	return got
}

// parseConfigPaths reads core.hooksPath and include paths
// (include.path, includeIf.*.path) from a git config file, as the
// sandbox's git config reader (profile.EachGitConfigEntry) does: the
// helper cannot import it.
func parseConfigPaths(data []byte) []configEntry {
	var out []configEntry
	section := ""
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return out
			}
			name := strings.Fields(line[1:end])
			if len(name) == 0 {
				return out
			}
			section = strings.ToLower(name[0])
			if line = strings.TrimSpace(line[end+1:]); line == "" {
				continue
			}
		}
		key, value, _ := strings.Cut(line, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		value = strings.TrimSpace(value)
		if i := strings.IndexAny(value, "#;"); i >= 0 && !strings.HasPrefix(value, `"`) {
			value = strings.TrimSpace(value[:i])
		}
		value = strings.Trim(value, `"`)
		switch {
		case value == "":
		case section == "core" && key == "hookspath":
			out = append(out, configEntry{value: value})
		case (section == "include" || section == "includeif") && key == "path":
			out = append(out, configEntry{value: value, include: true})
		}
	}
	return out
}
