package linux

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/airlockhq/airlock/sandbox/internal/linux/landlock"
)

// The Config goes to the helper in a compact encoding of its own, not
// JSON: the helper's first json.Unmarshal of a default run's 15 KB
// config took 0.69 ms (reflection over every type on first use) on the
// helper's path to the command. Fields go in a fixed order: numbers as
// varints, strings and lists length-prefixed, booleans as one byte 0 or
// 1. Decoding is strict: a wrong magic, a length past
// the end, a boolean other than 0 or 1, or a byte left over fails.

const configMagic = "ALC1"

// EncodeConfig encodes c for DecodeConfig.
func EncodeConfig(c *Config) []byte {
	w := &wire{b: make([]byte, 0, 4096)}
	w.b = append(w.b, configMagic...)
	w.strs(c.Argv)
	w.strs(c.Env)
	w.str(c.Dir)
	w.ints(c.Handoff)
	putList(w, c.Mounts, func(m Mount) {
		w.str(m.Kind)
		w.str(m.Source)
		w.str(m.Target)
		w.bool(m.ReadOnly)
		w.bool(m.NoExec)
		w.bool(m.Optional)
		w.int(m.Size)
		w.int(m.Inodes)
		w.uint(uint64(m.Mode))
		w.str(m.Content)
		w.int(int64(m.TreeFD))
	})
	w.str(c.Hostname)
	l := &c.Landlock
	w.bool(l.Enabled)
	putList(w, l.Rules, func(r landlock.Rule) {
		w.str(r.Path)
		w.uint(r.Access)
		w.str(string(r.Type))
	})
	w.strs(l.Read)
	w.strs(l.List)
	w.strs(l.Write)
	w.strs(l.Exec)
	w.strs(l.IoctlDev)
	w.bool(l.ScopeSignals)
	w.bool(l.ScopeAbstractUnix)
	w.rlimits(c.Rlimits)
	w.bool(c.Seccomp)
	w.bool(c.ExecGuard)
	w.bool(c.LoopbackUp)
	w.bool(c.Network != nil)
	if n := c.Network; n != nil {
		w.str(n.Tap)
		w.int(int64(n.MTU))
		w.str(n.MAC)
		w.str(n.GatewayMAC)
		w.strs(n.Addrs)
		w.strs(n.Gateways)
		w.int(int64(n.FD))
	}
	w.bool(c.Notifier != nil)
	if n := c.Notifier; n != nil {
		w.int(int64(n.FD))
		w.bool(n.BrokerTCP)
		w.bool(n.ExecWatch)
		w.bool(n.Guard != nil)
		if g := n.Guard; g != nil {
			w.pairs(g.Roots)
			w.names(g.Absent)
			w.names(g.Held)
			w.strs(g.Globs)
			putList(w, g.PrivateDevs, w.uint)
			w.pairs(g.GitDirs)
			w.strs(g.Names)
			w.str(g.Workspace)
			w.str(g.Home)
			w.strs(g.GlobalHooks)
			w.int(g.LinksBornBefore)
			w.rlimits(g.Rlimits)
		}
	}
	w.bool(c.DenyWatch != nil)
	if d := c.DenyWatch; d != nil {
		w.strs(d.Roots)
		w.strs(d.Masks)
		w.strs(d.Links)
		w.int(int64(d.FD))
	}
	w.strs(c.JoinCgroup)
	w.bool(c.NewCgroupNS)
	w.bool(c.NewSession)
	w.int(int64(c.StatusFD))
	w.bool(c.PTY != nil)
	if p := c.PTY; p != nil {
		w.int(int64(p.FD))
		w.uint(uint64(p.Rows))
		w.uint(uint64(p.Cols))
	}
	w.int(int64(c.PublishFD))
	return w.b
}

// DecodeConfig decodes what EncodeConfig made, failing on anything else.
func DecodeConfig(data []byte) (*Config, error) {
	if len(data) < len(configMagic) || string(data[:len(configMagic)]) != configMagic {
		return nil, errors.New("decode config: not a config (bad magic)")
	}
	r := &reader{b: data[len(configMagic):]}
	c := &Config{}
	c.Argv = r.strs()
	c.Env = r.strs()
	c.Dir = r.str()
	c.Handoff = r.ints()
	c.Mounts = getList(r, func() (m Mount) {
		m.Kind = r.str()
		m.Source = r.str()
		m.Target = r.str()
		m.ReadOnly = r.bool()
		m.NoExec = r.bool()
		m.Optional = r.bool()
		m.Size = r.int()
		m.Inodes = r.int()
		m.Mode = uint32(r.uintMax(1<<32 - 1))
		m.Content = r.str()
		m.TreeFD = r.fd()
		return m
	})
	c.Hostname = r.str()
	l := &c.Landlock
	l.Enabled = r.bool()
	l.Rules = getList(r, func() landlock.Rule {
		return landlock.Rule{Path: r.str(), Access: r.uint(), Type: landlock.FileType(r.str())}
	})
	l.Read = r.strs()
	l.List = r.strs()
	l.Write = r.strs()
	l.Exec = r.strs()
	l.IoctlDev = r.strs()
	l.ScopeSignals = r.bool()
	l.ScopeAbstractUnix = r.bool()
	c.Rlimits = r.rlimits()
	c.Seccomp = r.bool()
	c.ExecGuard = r.bool()
	c.LoopbackUp = r.bool()
	if r.bool() {
		n := &NetworkConfig{}
		n.Tap = r.str()
		n.MTU = r.fd()
		n.MAC = r.str()
		n.GatewayMAC = r.str()
		n.Addrs = r.strs()
		n.Gateways = r.strs()
		n.FD = r.fd()
		c.Network = n
	}
	if r.bool() {
		n := &NotifierConfig{}
		n.FD = r.fd()
		n.BrokerTCP = r.bool()
		n.ExecWatch = r.bool()
		if r.bool() {
			g := &GuardConfig{}
			g.Roots = r.pairs()
			g.Absent = r.names()
			g.Held = r.names()
			g.Globs = r.strs()
			g.PrivateDevs = getList(r, r.uint)
			g.GitDirs = r.pairs()
			g.Names = r.strs()
			g.Workspace = r.str()
			g.Home = r.str()
			g.GlobalHooks = r.strs()
			g.LinksBornBefore = r.int()
			g.Rlimits = r.rlimits()
			n.Guard = g
		}
		c.Notifier = n
	}
	if r.bool() {
		d := &DenyWatchConfig{}
		d.Roots = r.strs()
		d.Masks = r.strs()
		d.Links = r.strs()
		d.FD = r.fd()
		c.DenyWatch = d
	}
	c.JoinCgroup = r.strs()
	c.NewCgroupNS = r.bool()
	c.NewSession = r.bool()
	c.StatusFD = r.fd()
	if r.bool() {
		p := &PTYConfig{}
		p.FD = r.fd()
		p.Rows = uint16(r.uintMax(1<<16 - 1))
		p.Cols = uint16(r.uintMax(1<<16 - 1))
		c.PTY = p
	}
	c.PublishFD = r.fd()
	if r.err == nil && len(r.b) > 0 {
		r.fail("%d bytes left over", len(r.b))
	}
	if r.err != nil {
		return nil, r.err
	}
	return c, nil
}

type wire struct{ b []byte }

func (w *wire) uint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *wire) int(v int64)   { w.b = binary.AppendVarint(w.b, v) }

func (w *wire) bool(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}

func (w *wire) str(s string) {
	w.uint(uint64(len(s)))
	w.b = append(w.b, s...)
}

func (w *wire) strs(l []string) { putList(w, l, w.str) }

func (w *wire) ints(l []int) { putList(w, l, func(v int) { w.int(int64(v)) }) }

// putList writes l's length, then each element with put.
func putList[T any](w *wire, l []T, put func(T)) {
	w.uint(uint64(len(l)))
	for _, v := range l {
		put(v)
	}
}

// reader reads a wire encoding; its first error sticks and every later
// read returns a zero value.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("decode config: "+format, args...)
	}
}

func (r *reader) uint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("bad number")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) uintMax(max uint64) uint64 {
	v := r.uint()
	if v > max {
		r.fail("number %d out of range", v)
		return 0
	}
	return v
}

func (r *reader) int() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("bad number")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// fd reads an int that fits in 32 bits (descriptors, sizes of the
// kernel's int).
func (r *reader) fd() int {
	v := r.int()
	if v < -1<<31 || v > 1<<31-1 {
		r.fail("number %d out of range", v)
		return 0
	}
	return int(v)
}

// count reads a list's length, at most the bytes left (every element
// takes at least one).
func (r *reader) count() int {
	n := r.uint()
	if n > uint64(len(r.b)) {
		r.fail("list of %d past the end", n)
		return 0
	}
	return int(n)
}

func (r *reader) bool() bool {
	if r.err != nil {
		return false
	}
	if len(r.b) == 0 {
		r.fail("truncated")
		return false
	}
	v := r.b[0]
	r.b = r.b[1:]
	if v > 1 {
		r.fail("bad boolean %d", v)
		return false
	}
	return v == 1
}

func (r *reader) str() string {
	n := r.uint()
	if r.err != nil {
		return ""
	}
	if n > uint64(len(r.b)) {
		r.fail("string of %d past the end", n)
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *reader) strs() []string { return getList(r, r.str) }

func (r *reader) ints() []int { return getList(r, r.fd) }

// getList reads what putList wrote, each element with get: nil for an
// empty list, and nothing allocated past the bytes left (count).
func getList[T any](r *reader, get func() T) []T {
	n := r.count()
	if n == 0 {
		return nil
	}
	l := make([]T, n)
	for i := range l {
		l[i] = get()
	}
	return l
}

func (w *wire) pairs(l [][2]uint64) {
	putList(w, l, func(p [2]uint64) {
		w.uint(p[0])
		w.uint(p[1])
	})
}

func (w *wire) names(l []GuardName) {
	putList(w, l, func(n GuardName) {
		w.uint(n.Dir[0])
		w.uint(n.Dir[1])
		w.str(n.Name)
	})
}

func (w *wire) rlimits(l []Rlimit) {
	putList(w, l, func(r Rlimit) {
		w.int(int64(r.Resource))
		w.uint(r.Value)
	})
}

func (r *reader) pairs() [][2]uint64 {
	return getList(r, func() [2]uint64 { return [2]uint64{r.uint(), r.uint()} })
}

func (r *reader) names() []GuardName {
	return getList(r, func() GuardName {
		return GuardName{Dir: [2]uint64{r.uint(), r.uint()}, Name: r.str()}
	})
}

func (r *reader) rlimits() []Rlimit {
	return getList(r, func() Rlimit { return Rlimit{Resource: r.fd(), Value: r.uint()} })
}
