#!/usr/bin/env bash
# Startup benchmark (issue 2, "Performance"): the wall time of
#
#   airlock run --workspace WS -- /bin/true     (the full workspace preset)
#
# beside bubblewrap with every namespace and beside plain /bin/true, in one
# hyperfine run, then the ratio of the medians airlock/bwrap.
#
#   bash bench/startup.sh                     # airlock built as the README builds it
#   CGO_ENABLED=0 bash bench/startup.sh       # a static, cgo-free build
#   WARMUP=20 RUNS=300 bash bench/startup.sh  # the defaults
#
# Needs Go, hyperfine and bwrap (Debian: apt-get install hyperfine
# bubblewrap), and jq or python3 for the ratio. Writes
# bench/results/startup.json and startup.md (gitignored). The numbers and
# the machine they come from are in docs/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"

WARMUP=${WARMUP:-20}
RUNS=${RUNS:-300}

missing=
for t in go hyperfine bwrap; do
  command -v "$t" >/dev/null || missing="$missing $t"
done
if [ -n "$missing" ]; then
  echo "startup.sh: missing:$missing (Debian: apt-get install hyperfine bubblewrap; Go from go.dev/dl)" >&2
  exit 1
fi
if command -v jq >/dev/null; then
  median() { jq -r --arg n "$1" '.results[] | select(.command == $n) | .median' bench/results/startup.json; }
elif command -v python3 >/dev/null; then
  median() { python3 -c 'import json, sys; print(next(r["median"] for r in json.load(open(sys.argv[1]))["results"] if r["command"] == sys.argv[2]))' bench/results/startup.json "$1"; }
else
  echo "startup.sh: needs jq or python3 to read hyperfine's JSON" >&2
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -trimpath -ldflags=-s -o "$tmp/airlock" ./cmd/airlock
ws="$tmp/ws"
mkdir "$ws"

bwrap_cmd="bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all --die-with-parent /bin/true"
airlock_cmd="$tmp/airlock run --workspace $ws -- /bin/true"
# Each must work once before it is timed: a sandbox that fails fast would
# otherwise win the benchmark.
$bwrap_cmd || { echo "startup.sh: bwrap cannot run here: $bwrap_cmd" >&2; exit 1; }
$airlock_cmd || { echo "startup.sh: airlock cannot run here; see: $tmp/airlock doctor" >&2; exit 1; }

mkdir -p bench/results
hyperfine -N --warmup "$WARMUP" --runs "$RUNS" \
  --export-json bench/results/startup.json \
  --export-markdown bench/results/startup.md \
  -n true /bin/true \
  -n bwrap "$bwrap_cmd" \
  -n airlock "$airlock_cmd"

a=$(median airlock)
b=$(median bwrap)
awk -v a="$a" -v b="$b" 'BEGIN {
  printf "median: airlock %.2f ms, bwrap %.2f ms; airlock/bwrap = %.2fx (target <= 1.0x, goal 0.7x)\n", a * 1000, b * 1000, a / b
}'
