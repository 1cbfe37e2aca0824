#!/usr/bin/env bash
# Provider benchmark (issue 11, "Performance"), one run:
#   cold: `airlock exec` through the docker provider (fresh container,
#         created, started, removed) vs `docker run --rm IMAGE echo 1`,
#         and `airlock exec` through the local provider;
#   warm: `docker exec` into a running container (hyperfine) vs one call
#         in a session scope whose container runs (Go benchmark,
#         in-process: no CLI start), and the local provider in-process.
# The image is the test busybox image, built locally without a registry
# (provider/docker/testdata/build-images.sh).
#
#   bash bench/providers.sh          # RUNS=10
#   RUNS=30 bash bench/providers.sh
#
# Needs Go, hyperfine, a Docker Engine and busybox-static. Writes
# bench/results/providers.md (gitignored); the numbers and the machine are
# in docs/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
RUNS=${RUNS:-10}
for t in go hyperfine docker; do command -v $t >/dev/null || { echo "providers.sh: needs $t" >&2; exit 1; }; done
docker info >/dev/null 2>&1 || { echo "providers.sh: no Docker Engine answers; start dockerd" >&2; exit 1; }

mkdir -p bench/results
work=$(mktemp -d)
cid=
cleanup() { [ -n "$cid" ] && docker rm -f "$cid" >/dev/null; rm -rf "$work"; }
trap cleanup EXIT

go build -o "$work/" ./cmd/...  # airlock, and the airlock-server that runs exec
img=$(provider/docker/testdata/build-images.sh | awk '$1 == "busybox" {print $2}')
cat >"$work/sandboxes.toml" <<TOML
[sandbox.bb]
provider = "docker"
image = "$img"

[sandbox.loc]
provider = "local"
TOML
cid=$(docker run -d --network none --read-only --user 65534:65534 "$img" sh -c 'while :; do sleep 3600; done')
out=bench/results/providers.md
{
  echo "### CLI, one process per call ($RUNS runs each)"
  echo
} >"$out"
hyperfine --style basic --warmup 2 --runs "$RUNS" --export-markdown "$work/cli.md" \
  -n 'airlock exec, docker provider (cold)' "$work/airlock exec --config $work/sandboxes.toml --sandbox bb -- echo 1" \
  -n 'docker run --rm' "docker run --rm --network none $img echo 1" \
  -n 'airlock exec, local provider' "$work/airlock exec --config $work/sandboxes.toml --sandbox loc -- echo 1" \
  -n 'docker exec (running container)' "docker exec $cid echo 1"
cat "$work/cli.md" >>"$out"
{
  echo
  echo "### In-process, per call ($RUNS calls each)"
  echo
  echo '```'
  go test -run '^$' -bench 'BenchmarkWarmSession|BenchmarkColdExecution' -benchtime "${RUNS}x" ./provider/docker | grep ^Benchmark
  go test -run '^$' -bench 'BenchmarkLocalExecution' -benchtime "${RUNS}x" ./provider | grep ^Benchmark
  echo '```'
} >>"$out"
cat "$out"
