package sandbox

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"

	"golang.org/x/sys/unix"
)

// HelperName is the file name of the sandbox's helper binary
// (cmd/airlock-sandbox), which an Executor looks for beside the running
// program.
const HelperName = "airlock-sandbox"

// helperPackage is the main package a helper binary must have been built
// from.
const helperPackage = "github.com/airlockhq/airlock/cmd/airlock-sandbox"

// airlockModule is the module both the helper and this package belong to.
const airlockModule = "github.com/airlockhq/airlock"

// helperBinary is the program an Executor execs as the stage-2 helper
// (which execs the guard proxy from its own file in turn). The helper
// protocol (the JSON config, the descriptors, the exit statuses) is not
// versioned: both sides must be one build. A file that is not provably
// the same build is never run; the Executor re-executes its own program
// instead, which holds the same helpers and is correct, only larger.
type helperBinary struct {
	// file is the helper opened once, O_RDONLY|O_CLOEXEC; nil means the
	// Executor re-executes itself (/proc/self/exe). Execing the
	// descriptor runs exactly the file that was checked, whatever
	// replaces the path later.
	file *os.File
	// path is where the helper was found, or "/proc/self/exe".
	path string
	// fallback says why the Executor re-executes itself; empty when file
	// is set.
	fallback string
}

// selfExe is the path an Executor without a helper binary execs.
const selfExe = "/proc/self/exe"

// openHelper finds the helper: path when set (Options.Helper), else
// HelperName beside os.Executable(). Any failure, an absent file
// included, is the fallback with its reason.
func openHelper(path string) helperBinary {
	if path == "" {
		exe, err := os.Executable()
		if err != nil {
			return helperBinary{path: selfExe, fallback: fmt.Sprintf("no path of the running program: %v", err)}
		}
		path = filepath.Join(filepath.Dir(exe), HelperName)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return helperBinary{path: selfExe, fallback: fmt.Sprintf("no helper binary: %v", err)}
	}
	own, ok := debug.ReadBuildInfo()
	if !ok {
		f.Close()
		return helperBinary{path: selfExe, fallback: "this program carries no build information to compare a helper binary with"}
	}
	theirs, err := readBuildInfo(f)
	if err == nil {
		err = sameBuild(own, theirs)
	}
	if err != nil {
		f.Close()
		return helperBinary{path: selfExe, fallback: fmt.Sprintf("%s is not the helper of this build: %v", path, err)}
	}
	return helperBinary{file: f, path: path}
}

// setPath makes c exec the helper: by its descriptor, passed as c's
// last ExtraFile, so that the number the path names is the one os/exec
// places it at in the child after its shuffle of the descriptors. (A
// descriptor of the supervisor's own, duplicated above them, would need
// a number above the 64 a fresh table holds, and the table's growth in
// a threaded process waits for an RCU grace period: about 10 ms a run.)
// The helper marks every inherited descriptor close-on-exec first
// (linux.CloseInheritedOnExec), so this one never reaches the command.
// Without a helper binary, c re-executes this program.
func (h helperBinary) setPath(c *exec.Cmd) {
	if h.file == nil {
		c.Path = selfExe
		return
	}
	c.ExtraFiles = append(c.ExtraFiles, h.file)
	c.Path = "/proc/self/fd/" + strconv.Itoa(2+len(c.ExtraFiles))
}

// sameBuild says whether theirs, a helper's build information, is the
// build of own's copy of the airlock module: the Go toolchain, the
// module's version and sum, every build setting (flags, tags, GOARCH,
// the VCS revision and whether the tree was modified), and the same
// version of every module the helper links. Go records nothing finer:
// two builds of one modified tree at two moments look the same, which is
// why the README builds all binaries in one go build.
func sameBuild(own, theirs *debug.BuildInfo) error {
	if theirs.Path != helperPackage {
		return fmt.Errorf("it is a build of %q, not %s", theirs.Path, helperPackage)
	}
	if theirs.GoVersion != own.GoVersion {
		return fmt.Errorf("built with %s, this program with %s", theirs.GoVersion, own.GoVersion)
	}
	mine := moduleOf(own, airlockModule)
	if mine == nil {
		return fmt.Errorf("this program links no %s", airlockModule)
	}
	if theirs.Main.Path != airlockModule || theirs.Main.Version != mine.Version || theirs.Main.Sum != mine.Sum {
		return fmt.Errorf("module %s %s, this program's %s %s", theirs.Main.Path, theirs.Main.Version, mine.Path, mine.Version)
	}
	if a, b := settings(theirs), settings(own); len(a) != len(b) {
		return fmt.Errorf("build settings %v, this program's %v", a, b)
	} else {
		for k, v := range a {
			if w, ok := b[k]; !ok || w != v {
				return fmt.Errorf("build setting %s=%q, this program's %q", k, v, w)
			}
		}
	}
	for _, d := range theirs.Deps {
		m := moduleOf(own, d.Path)
		if m == nil || m.Version != d.Version || m.Sum != d.Sum || (m.Replace == nil) != (d.Replace == nil) ||
			m.Replace != nil && (m.Replace.Path != d.Replace.Path || m.Replace.Version != d.Replace.Version || m.Replace.Sum != d.Replace.Sum) {
			return fmt.Errorf("it links %s %s, which this program does not", d.Path, d.Version)
		}
	}
	return nil
}

// moduleOf is the module at path in bi: its main module or a dependency.
func moduleOf(bi *debug.BuildInfo, path string) *debug.Module {
	if bi.Main.Path == path {
		return &bi.Main
	}
	for _, d := range bi.Deps {
		if d.Path == path {
			return d
		}
	}
	return nil
}

func settings(bi *debug.BuildInfo) map[string]string {
	m := make(map[string]string, len(bi.Settings))
	for _, s := range bi.Settings {
		m[s.Key] = s.Value
	}
	return m
}

// readBuildInfo reads the build information the Go linker leaves in an
// ELF executable's .go.buildinfo section: a few small reads (the ELF
// header, the section headers, their names, the section), not the file.
// It reads only the layout of Go 1.18 and later, little-endian 64-bit,
// the only kind this package runs on.
func readBuildInfo(f *os.File) (*debug.BuildInfo, error) {
	var eh [64]byte
	if _, err := f.ReadAt(eh[:], 0); err != nil {
		return nil, fmt.Errorf("read the ELF header: %w", err)
	}
	if !bytes.Equal(eh[:4], []byte("\x7fELF")) || eh[4] != 2 || eh[5] != 1 {
		return nil, errors.New("not a little-endian 64-bit ELF file")
	}
	le := binary.LittleEndian
	shoff, shentsize, shnum, shstrndx := le.Uint64(eh[0x28:]), int(le.Uint16(eh[0x3a:])), int(le.Uint16(eh[0x3c:])), int(le.Uint16(eh[0x3e:]))
	if shentsize != 64 || shnum == 0 || shnum > 256 || shstrndx >= shnum {
		return nil, errors.New("unexpected ELF section headers")
	}
	sh := make([]byte, shnum*64)
	if _, err := f.ReadAt(sh, int64(shoff)); err != nil {
		return nil, fmt.Errorf("read the ELF section headers: %w", err)
	}
	section := func(i int, max uint64) ([]byte, error) {
		h := sh[i*64:]
		off, size := le.Uint64(h[0x18:]), le.Uint64(h[0x20:])
		if size > max {
			return nil, fmt.Errorf("ELF section %d is %d bytes", i, size)
		}
		b := make([]byte, size)
		_, err := f.ReadAt(b, int64(off))
		return b, err
	}
	names, err := section(shstrndx, 1<<16)
	if err != nil {
		return nil, fmt.Errorf("read the ELF section names: %w", err)
	}
	for i := 0; i < shnum; i++ {
		n := int(le.Uint32(sh[i*64:]))
		if n >= len(names) {
			continue
		}
		end := bytes.IndexByte(names[n:], 0)
		if end < 0 || string(names[n:n+end]) != ".go.buildinfo" {
			continue
		}
		data, err := section(i, 1<<20)
		if err != nil {
			return nil, fmt.Errorf("read .go.buildinfo: %w", err)
		}
		return parseBuildInfo(data)
	}
	return nil, errors.New("no .go.buildinfo section: not a Go program")
}

// parseBuildInfo decodes a .go.buildinfo section: a 32-byte header (the
// magic, pointer size, flags), then, inline, the Go version and the
// module information as length-prefixed strings; the module information
// sits between two 16-byte sentinels.
func parseBuildInfo(data []byte) (*debug.BuildInfo, error) {
	const magic = "\xff Go buildinf:"
	if len(data) < 32 || string(data[:len(magic)]) != magic || data[15]&2 == 0 {
		return nil, errors.New(".go.buildinfo in a layout older than Go 1.18")
	}
	rest := data[32:]
	str := func() (string, bool) {
		n, w := binary.Uvarint(rest)
		if w <= 0 || n > uint64(len(rest)-w) {
			return "", false
		}
		s := string(rest[w : w+int(n)])
		rest = rest[w+int(n):]
		return s, true
	}
	version, ok1 := str()
	mod, ok2 := str()
	if !ok1 || !ok2 || len(mod) < 33 || mod[len(mod)-17] != '\n' {
		return nil, errors.New("malformed .go.buildinfo")
	}
	bi, err := debug.ParseBuildInfo(mod[16 : len(mod)-16])
	if err != nil {
		return nil, fmt.Errorf("parse the build information: %w", err)
	}
	bi.GoVersion = version
	return bi, nil
}
