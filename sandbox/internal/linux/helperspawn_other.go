//go:build !amd64

package linux

// No helper spawner is written for this architecture: the helper is
// cloned by exec.Cmd (sandbox/helper.go).
const spawnMachine = 0

const spawnSource = ""

var spawnCode []byte
