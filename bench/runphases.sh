#!/usr/bin/env bash
# Where one `airlock run --workspace WS -- /bin/true` spends its time,
# from the kernel's side: perf records a few syscall and scheduler
# tracepoints over RUNS runs (no ptrace, so the runs keep their speed),
# and runphases.py prints the median of each phase, in the order the
# run goes through them: the supervisor's start, the id-map holder, the
# placeholders, the helper's start, the mount view, the guard proxy, the
# command, the end-of-run checks. docs/BENCHMARKS.md reads it.
#
#   sudo bash bench/runphases.sh              # 30 runs of a build of this tree
#   RUNS=60 AIRLOCK=/path/to/airlock sudo -E bash bench/runphases.sh
#
# Needs root (tracepoints), perf (Debian: linux-perf) and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
RUNS=${RUNS:-30}
command -v perf >/dev/null || { echo "runphases.sh: needs perf (Debian: apt-get install linux-perf)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin=${AIRLOCK:-}
if [ -z "$bin" ]; then
  CGO_ENABLED=${CGO_ENABLED:-0} go build -trimpath -ldflags=-s -o "$tmp/" ./cmd/...
  bin="$tmp/airlock"
fi
mkdir "$tmp/ws"
"$bin" run --workspace "$tmp/ws" -- /bin/true
events=syscalls:sys_enter_execve,syscalls:sys_enter_mkdirat,syscalls:sys_enter_unlinkat
events=$events,syscalls:sys_enter_pivot_root,syscalls:sys_enter_landlock_restrict_self
events=$events,syscalls:sys_enter_seccomp,syscalls:sys_enter_clone,syscalls:sys_enter_clone3,syscalls:sys_enter_execveat,syscalls:sys_enter_fanotify_init
events=$events,syscalls:sys_enter_exit_group,syscalls:sys_enter_close_range,sched:sched_process_exit
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
perf record -q -o "$tmp/perf.data" -e "$events" -- \
  sh -c 'for i in $(seq "$1"); do "$2" run --workspace "$3" -- /bin/true; done' sh "$RUNS" "$bin" "$tmp/ws"
perf script -i "$tmp/perf.data" -F comm,pid,tid,time,event,trace >"$tmp/trace.txt" 2>/dev/null
python3 bench/runphases.py "$tmp/trace.txt"
