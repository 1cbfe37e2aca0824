//go:build linux

package seccomp

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// label names a position in a program being assembled. The empty label means
// "the next instruction", which is how a conditional jump falls through.
type label string

const next label = ""

// assembler collects classic-BPF instructions whose jump targets are labels,
// and resolves them to the relative offsets the kernel wants. Classic BPF only
// jumps forward, and a conditional jump reaches at most 255 instructions, so
// counting by hand is where filters usually go wrong.
type assembler struct {
	insns  []pendingInsn
	labels map[label]int
	err    error // first error from mark; reported by assemble
}

// pendingInsn is an instruction whose jump targets are still labels.
type pendingInsn struct {
	code   uint16
	k      uint32
	jt, jf label // targets if the condition holds, and if not
}

// loadWord loads the 32-bit word at offset off of struct seccomp_data.
func (a *assembler) loadWord(off uint32) {
	a.insns = append(a.insns, pendingInsn{code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, k: off})
}

// jumpEq jumps to jt if the accumulator equals k, else to jf.
func (a *assembler) jumpEq(k uint32, jt, jf label) {
	a.insns = append(a.insns, pendingInsn{code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, k: k, jt: jt, jf: jf})
}

// jumpSet jumps to jt if the accumulator has any bit of k set, else to jf.
func (a *assembler) jumpSet(k uint32, jt, jf label) {
	a.insns = append(a.insns, pendingInsn{code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, k: k, jt: jt, jf: jf})
}

// ret ends the filter with the seccomp action k.
func (a *assembler) ret(k uint32) {
	a.insns = append(a.insns, pendingInsn{code: unix.BPF_RET | unix.BPF_K, k: k})
}

// mark places l at the next instruction to be emitted.
func (a *assembler) mark(l label) {
	if a.labels == nil {
		a.labels = make(map[label]int)
	}
	if _, dup := a.labels[l]; dup && a.err == nil {
		a.err = fmt.Errorf("label %q defined twice", l)
	}
	a.labels[l] = len(a.insns)
}

// assemble resolves labels and returns the finished, validated program.
func (a *assembler) assemble() ([]unix.SockFilter, error) {
	if a.err != nil {
		return nil, a.err
	}
	out := make([]unix.SockFilter, len(a.insns))
	for pc, in := range a.insns {
		f := unix.SockFilter{Code: in.code, K: in.k}
		if isCondJump(in.code) {
			jt, err := a.offset(pc, in.jt)
			if err != nil {
				return nil, err
			}
			jf, err := a.offset(pc, in.jf)
			if err != nil {
				return nil, err
			}
			f.Jt, f.Jf = jt, jf
		}
		out[pc] = f
	}
	if err := validate(out); err != nil {
		return nil, err
	}
	return out, nil
}

// offset is the distance from the instruction after pc to l, which must fit
// the 8-bit jump fields of a conditional jump.
func (a *assembler) offset(pc int, l label) (uint8, error) {
	if l == next {
		return 0, nil
	}
	target, ok := a.labels[l]
	if !ok {
		return 0, fmt.Errorf("instruction %d: jump to undefined label %q", pc, l)
	}
	d := target - (pc + 1)
	if d < 0 {
		return 0, fmt.Errorf("instruction %d: backward jump to label %q (classic BPF only jumps forward)", pc, l)
	}
	if d > 255 {
		return 0, fmt.Errorf("instruction %d: jump to label %q is %d instructions, more than 255", pc, l, d)
	}
	return uint8(d), nil
}

func isCondJump(code uint16) bool {
	return code == unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K || code == unix.BPF_JMP|unix.BPF_JSET|unix.BPF_K
}

// seccompDataSize is sizeof(struct seccomp_data): nr, arch, instruction
// pointer and six arguments.
const seccompDataSize = 64

// validate applies the checks the kernel applies to a seccomp filter
// (bpf_check_classic and seccomp_check_filter) to the subset of classic BPF
// this package emits, so a malformed program fails in Build, not in Install.
func validate(prog []unix.SockFilter) error {
	if len(prog) == 0 {
		return errors.New("empty program")
	}
	if len(prog) > unix.BPF_MAXINSNS {
		return fmt.Errorf("program has %d instructions, the kernel allows %d", len(prog), unix.BPF_MAXINSNS)
	}
	for pc, f := range prog {
		remaining := len(prog) - pc - 1
		switch f.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			if f.K%4 != 0 || f.K >= seccompDataSize {
				return fmt.Errorf("instruction %d: load from offset %d outside seccomp_data", pc, f.K)
			}
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			if int(f.Jt) >= remaining || int(f.Jf) >= remaining {
				return fmt.Errorf("instruction %d: jump past the end of the program", pc)
			}
		case unix.BPF_RET | unix.BPF_K:
		default:
			return fmt.Errorf("instruction %d: opcode %#x not emitted by this package", pc, f.Code)
		}
	}
	if last := prog[len(prog)-1]; last.Code != unix.BPF_RET|unix.BPF_K {
		return errors.New("program does not end with a return")
	}
	return nil
}
