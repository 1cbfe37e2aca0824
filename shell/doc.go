// Package shell derives the requirements of a shell script: what a Bash
// command would run, read, write and connect to, as tool.Requirements.
//
// A script is split by a real parser (mvdan.cc/sh/v3) across &&, ||, ;,
// pipes, subshells, command and process substitution and function
// bodies (shell.go), and its words are rendered with what is only known
// at run time as a tool.Hole (words.go). Every simple command is a
// command.execute; the commands that wrappers (sudo, env, xargs, find
// -exec, bash -c: wrappers.go, find.go, interpreters.go) and options
// and variables (ssh -o ProxyCommand, git -c core.sshCommand,
// GIT_SSH_COMMAND, tar --to-command, nc -e, sed's e: nested.go) run are
// commands too. filesystem.read and filesystem.write are the files a
// command touches (redirections, files.go, writes.go, trees.go) and
// network.connect the hosts it reaches (network.go, fetch.go, ssh.go).
// A value bash evaluates as code (arithmetic, "${!x}", eval, source) is
// an unresolved command unless the script only assigned it inert values
// (data.go, databuiltins.go). Every command.execute carries its
// canonical form (canon.go), which package rules compares.
//
// What airlock knows about one program family is in one file: git.go,
// gitconfig.go, gitoutput.go and gitalias.go (git's subcommands, global
// options, the files its options write, its aliases from every
// configuration file and the programs its configuration runs), npm.go
// and npmcommands.go (npm's commands as npm resolves them), gotool.go
// (go), make.go (make, man), sed.go, ssh.go (ssh, scp, sftp, rsync),
// fetch.go (curl, wget, nc), archives.go (tar, zip), find.go (find,
// xargs, parallel), search.go (grep, jq), interpreters.go (shells,
// perl), wrappers.go (sudo, env, su, sg, script, trap), containers.go
// (docker, podman, kubectl); the tables of which commands read and write
// which operands are in files.go, writes.go and trees.go. builtins.go
// says which parts only change the shell's own state (cd, export, an
// ordinary assignment) and so are no command of their own, unseen.go
// what a command depends on that the gate cannot see, and budget.go the
// bounds that keep one analysis linear in its input.
//
// The package registers itself with package tool at init, so that
// tool.Prepare of a Bash or Monitor call reaches it. It decides nothing
// (package gate) and knows no rule syntax (package rules).
package shell
