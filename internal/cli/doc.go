// Package cli is what airlock's two binaries share to read one command
// line the same way: the profile flags of run, doctor and mcp
// (ProfileFlags), flag parsing with its one-line usage errors
// (ParseCommandFlags, ParseFlags), command groups (RunGroup), the usage
// exit status and the version line.
//
// airlock (cmd/airlock) holds the commands every tool call pays for (run,
// hook, policy, doctor, init, audit) and links nothing heavy; airlock-server
// (cmd/airlock-server) holds mcp, exec and serve, which bring the Docker
// client, SQLite, PostgreSQL and the MCP SDK. What the commands do lives
// in the packages they call; this package only turns flags into their
// options.
package cli
