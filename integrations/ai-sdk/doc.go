// Package aisdk holds the airlock adapter for Vercel's AI SDK harness
// (@ai-sdk/harness), a Node package (see README.md). The Go side is only
// its test: `go test ./...` builds airlock, and runs the package's Node
// tests against the real harness and a real `airlock serve`.
package aisdk
