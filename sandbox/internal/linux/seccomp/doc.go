// Package seccomp builds and installs the syscall filter that airlock puts on
// every sandboxed command on Linux.
//
// The filter is classic BPF, assembled by hand for amd64 and arm64 without
// libseccomp. It kills any syscall made through a foreign ABI (i386 or x32 on
// amd64, arm32 on arm64), answers EPERM to the syscalls that reach kernel
// attack surface or host-wide state (ptrace, bpf, io_uring, keyrings, mounts,
// modules, clocks, ...), refuses new user namespaces, TIOCSTI/TIOCLINUX and
// socket families outside unix/inet/inet6/netlink-route, and allows
// everything else. [Blocked] lists the rules in words for a sandbox report.
//
// This package owns the filter and the call that installs it. It does not own
// prctl(PR_SET_NO_NEW_PRIVS), which the caller must have done before
// [Install]; it does not drop capabilities or enter namespaces; and it does
// not decide which sandbox profile gets a filter — that is the caller's
// choice, and this package offers exactly one filter.
package seccomp
