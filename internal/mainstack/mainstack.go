// Package mainstack grows the main goroutine's stack to 32 KiB once, at
// the start of the process, for the programs that import it (airlock:
// the CLI, the supervisor, the stage-2 helper, the guard proxy).
//
// A goroutine's stack starts at 8 KiB and doubles when a call needs
// more; each doubling copies the stack and adjusts every frame on it,
// reading the stack maps of each function from the binary's tables,
// which a short-lived process has not paged in yet. Package inits (a
// regexp compile, gVisor's registrations) and the hook's decision reach
// that depth, so every airlock start paid several copies of a deep stack,
// about 0.1 ms of CPU (measured on the hook: docs/BENCHMARKS.md). Grown
// here, before almost every other package's init because this one
// imports nothing, the copy is of a stack a few frames deep, and the
// later calls fit.
//
// It owns nothing else and exports nothing: importing it is the effect.
package mainstack

func init() { grow(0) }

// grow has a 32 KiB frame, so calling it makes the runtime grow the stack
// to fit it at once. i is 0; reading pad[i] keeps the frame from being
// optimised away.
//
//go:noinline
func grow(i int) byte {
	var pad [32 << 10]byte
	return pad[i]
}
