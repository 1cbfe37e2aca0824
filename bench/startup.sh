#!/usr/bin/env bash
# Startup benchmark (issues 2 and 21, "Performance"): in one hyperfine run,
# the wall time of
#
#   airlock run --workspace WS -- /bin/true         (the full workspace preset)
#   airlock run --workspace BIG -- /bin/true        (BIG: 100,000 files, as a node_modules)
#   airlock hook claude-code < a three-segment Bash call
#   airlock --version                               (the Go runtime and package inits alone)
#   a Go hello world, built as airlock is           (the floor of any Go program's start)
#
# beside bubblewrap with every namespace and beside plain /bin/true, then
# the ratios of the medians: airlock/bwrap, big/small workspace, and the
# hook's median against its 3 ms target.
#
#   bash bench/startup.sh                     # airlock built as the README builds it (CGO_ENABLED=0)
#   CGO_ENABLED=1 bash bench/startup.sh       # a cgo build (Go's default where a C compiler is)
#   WARMUP=20 RUNS=300 bash bench/startup.sh  # the defaults
#   FILES=100000 bash bench/startup.sh        # the big workspace's size (0: no such row)
#
# Needs Go, hyperfine and bwrap (Debian: apt-get install hyperfine
# bubblewrap), and jq or python3 for the ratio. Writes
# bench/results/startup.json and startup.md (gitignored). The numbers and
# the machine they come from are in docs/BENCHMARKS.md. The load average
# is printed before and after: on a shared machine only ratios from one
# run mean anything.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"

WARMUP=${WARMUP:-20}
export CGO_ENABLED=${CGO_ENABLED:-0}
RUNS=${RUNS:-300}
FILES=${FILES:-100000}

missing=
for t in go hyperfine bwrap; do
  command -v "$t" >/dev/null || missing="$missing $t"
done
if [ -n "$missing" ]; then
  echo "startup.sh: missing:$missing (Debian: apt-get install hyperfine bubblewrap; Go from go.dev/dl)" >&2
  exit 1
fi
if command -v jq >/dev/null; then
  median() { jq -r --arg n "$1" '.results[] | select(.command == $n) | .median' "$2"; }
elif command -v python3 >/dev/null; then
  median() { python3 -c 'import json, sys; print(next(r["median"] for r in json.load(open(sys.argv[1]))["results"] if r["command"] == sys.argv[2]))' "$2" "$1"; }
else
  echo "startup.sh: needs jq or python3 to read hyperfine's JSON" >&2
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# airlock and airlock-server, as the README builds them (the benchmark
# runs only airlock).
go build -trimpath -ldflags=-s -o "$tmp/" ./cmd/...
ws="$tmp/ws"
mkdir "$ws"
# The hook's audit log and grants go to the temporary directory, not the
# user's.
export XDG_STATE_HOME="$tmp/state" AIRLOCK_GRANT_DIR="$tmp/state/grants"

bwrap_cmd="bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all --die-with-parent /bin/true"
airlock_cmd="$tmp/airlock run --workspace $ws -- /bin/true"
# Each must work once before it is timed: a sandbox that fails fast would
# otherwise win the benchmark.
$bwrap_cmd || { echo "startup.sh: bwrap cannot run here: $bwrap_cmd" >&2; exit 1; }
$airlock_cmd || { echo "startup.sh: airlock cannot run here; see: $tmp/airlock doctor" >&2; exit 1; }

# A Bash call of three segments (a pipeline and a list), as Claude Code
# sends it; cwd is the workspace, so the hook reads its (absent) policy
# files as for a real call.
printf '{"session_id":"bench","transcript_path":"%s/t.jsonl","cwd":"%s","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls -la | grep -c src && echo done","description":"bench"},"tool_use_id":"bench"}\n' "$tmp" "$ws" >"$tmp/hook.json"
hook_cmd="$tmp/airlock hook claude-code < $tmp/hook.json"
# What any Go program's start costs here, built with airlock's flags: the
# hook and --version above it are what airlock's binary and work add.
mkdir "$tmp/hello"
printf 'package main\n\nimport "os"\n\nfunc main() { os.Stdout.WriteString("hello\\n") }\n' >"$tmp/hello/main.go"
(cd "$tmp/hello" && go mod init hello >/dev/null 2>&1 && go build -trimpath -ldflags=-s -o "$tmp/hello-go" .)
"$tmp/hello-go" >/dev/null || { echo "startup.sh: the Go hello world does not run" >&2; exit 1; }
(cd "$ws" && eval "$hook_cmd" | grep -q permissionDecision) || { echo "startup.sh: the hook gave no decision: $hook_cmd" >&2; exit 1; }

# The big workspace: FILES files (rounded up to 100) in directories of
# 100, like a node_modules; made anew by each run of the script.
big_args=()
if [ "$FILES" -gt 0 ]; then
  big="$tmp/big"
  echo "startup.sh: making $FILES files in $big ..." >&2
  for ((i = 0; i * 100 < FILES; i++)); do
    d=$(printf '%s/node_modules/pkg%04d' "$big" "$i")
    mkdir -p "$d"
    (cd "$d" && touch f{00..99}.js)
  done
  big_cmd="$tmp/airlock run --workspace $big -- /bin/true"
  $big_cmd || { echo "startup.sh: airlock cannot run in the big workspace" >&2; exit 1; }
  big_args=(-n airlock-big "$big_cmd")
fi

mkdir -p bench/results
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
# -N (no shell) for every command but the hook's, whose stdin needs one;
# hyperfine subtracts the shell's own start-up from it.
hyperfine -N --warmup "$WARMUP" --runs "$RUNS" \
  --export-json bench/results/startup.json \
  --export-markdown bench/results/startup.md \
  -n true /bin/true \
  -n bwrap "$bwrap_cmd" \
  -n airlock "$airlock_cmd" \
  "${big_args[@]}" \
  -n version "$tmp/airlock --version" \
  -n hello-go "$tmp/hello-go"
hyperfine --warmup "$WARMUP" --runs "$RUNS" \
  --export-json bench/results/startup-hook.json \
  --export-markdown bench/results/startup-hook.md \
  -n hook "$hook_cmd"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

a=$(median airlock bench/results/startup.json)
b=$(median bwrap bench/results/startup.json)
h=$(median hook bench/results/startup-hook.json)
v=$(median version bench/results/startup.json)
g0=$(median hello-go bench/results/startup.json)
awk -v a="$a" -v b="$b" -v h="$h" -v v="$v" -v g0="$g0" 'BEGIN {
  printf "median: airlock %.2f ms, bwrap %.2f ms; airlock/bwrap = %.2fx (target <= 1.0x, goal 0.7x)\n", a * 1000, b * 1000, a / b
  printf "median: hook claude-code %.2f ms (target <= 3 ms)\n", h * 1000
  printf "median: airlock --version %.2f ms, a Go hello world %.2f ms (%.2fx)\n", v * 1000, g0 * 1000, v / g0
}'
if [ "$FILES" -gt 0 ]; then
  g=$(median airlock-big bench/results/startup.json)
  awk -v a="$a" -v g="$g" -v n="$FILES" 'BEGIN {
    printf "median: airlock in %d files %.2f ms; big/small workspace = %.2fx (target <= 1.3x)\n", n, g * 1000, g / a
  }'
fi
