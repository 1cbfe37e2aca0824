//go:build !amd64

package linux

// No small holder is written for this architecture: the Go holders
// (idmap.go) serve.
const holderMachine = 0

var holderCode []byte
