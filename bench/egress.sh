#!/usr/bin/env bash
# Egress benchmark: download a 200 MiB file from a test host through the
# allowlist gateway (--net HOST:PORT), through --net all, and unsandboxed,
# interleaved in one run; then the first connection's connect time in
# each (every airlock run starts a fresh gateway, so each is a first
# connection), and the sandbox setup time the gateway adds.
#
# The test host is a network namespace joined to this machine's by a veth
# pair on 10.213.20.0/24: no packet leaves the machine. Needs root, ip(8),
# curl, python3 and Go. Prints a Markdown section for docs/BENCHMARKS.md.
#
#   sudo bash bench/egress.sh            # 5 downloads and 30 connects each
#   ROUNDS=3 CONNECTS=10 bash bench/egress.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"

ROUNDS=${ROUNDS:-5}
CONNECTS=${CONNECTS:-30}
SIZE_MIB=${SIZE_MIB:-200}
NET=10.213.20
NS=airlock-bench-$$
LINK=albench$$
HOST=$NET.2
PORT=8080

[ "$(id -u)" = 0 ] || { echo "egress.sh: needs root (network namespaces)" >&2; exit 1; }
[ -x /usr/bin/python3 ] || { echo "egress.sh: needs /usr/bin/python3 (the probe runs inside the sandbox)" >&2; exit 1; }
for t in ip curl go; do command -v $t >/dev/null || { echo "egress.sh: needs $t" >&2; exit 1; }; done

tmp=$(mktemp -d)
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
  ip link del "$LINK" 2>/dev/null || true
  ip netns del "$NS" 2>/dev/null || true
  rm -rf "$tmp" "/dev/shm/airlock-bench-blob-$$"
}
trap cleanup EXIT

go build -o "$tmp/" ./cmd/...
go build -o "$tmp/egressserver" ./bench/egressserver

ip netns add "$NS"
ip link add "$LINK" type veth peer name "${LINK}p"
ip link set "${LINK}p" netns "$NS"
ip addr add $NET.1/24 dev "$LINK"
ip link set "$LINK" up
ip -n "$NS" addr add $HOST/24 dev "${LINK}p"
ip -n "$NS" link set "${LINK}p" up
ip -n "$NS" link set lo up
# Refuse to go on unless the test host is reached over our veth.
ip route get $HOST | grep -q "dev $LINK " || { echo "egress.sh: $HOST is not routed over $LINK" >&2; exit 1; }

blob=/dev/shm/airlock-bench-blob-$$
head -c $((SIZE_MIB << 20)) /dev/urandom > "$blob"
ip netns exec "$NS" "$tmp/egressserver" -addr $HOST:$PORT -blob "$blob" > "$tmp/server.log" 2>&1 &
server=$!
for _ in $(seq 50); do curl -s -o /dev/null http://$HOST:$PORT/small && break; sleep 0.1; done

ws="$tmp/ws"
mkdir -p "$ws"
direct()    { "$@"; }
allowlist() { "$tmp/airlock" run --workspace "$ws" --net $HOST:$PORT -- "$@"; }
netall()    { "$tmp/airlock" run --workspace "$ws" --net all,$HOST:$PORT -- "$@"; }
configs="direct allowlist netall"

results="$tmp/results"
: > "$results"
# Downloads, interleaved so that drift hits every configuration alike:
# first over the bare veth (as fast as this machine's CPUs go), then over
# the same veth shaped to 1 Gbit/s (a fast real uplink).
downloads_as() {
  local kind=$1
  for r in $(seq "$ROUNDS"); do
    for c in $configs; do
      out=$($c curl -s -o /dev/null -w '%{size_download} %{speed_download}' http://$HOST:$PORT/blob)
      set -- $out
      [ "$1" = $((SIZE_MIB << 20)) ] || { echo "egress.sh: $c downloaded $1 bytes" >&2; exit 1; }
      echo "$kind $c $2" >> "$results"
    done
  done
}
downloads_as download
if ip netns exec "$NS" tc qdisc add dev "${LINK}p" root tbf rate 1gbit burst 512kb latency 20ms 2>/dev/null; then
  downloads_as shaped
  ip netns exec "$NS" tc qdisc del dev "${LINK}p" root
fi
# First connection of a run: how long connect() blocks on a fresh
# socket (SYN to established; through the gateway that includes the
# policy check and the supervisor's own connect to the test host), and
# curl's time_connect, which also counts curl's start-up work before the
# SYN (NSS, nscd probes).
probe='import socket,sys,time
s = socket.socket(); t = time.perf_counter(); s.connect((sys.argv[1], int(sys.argv[2]))); print(time.perf_counter() - t)'
for r in $(seq "$CONNECTS"); do
  for c in $configs; do
    echo "connect $c $($c /usr/bin/python3 -c "$probe" $HOST $PORT)" >> "$results"
    echo "curlconnect $c $($c curl -s -o /dev/null -w '%{time_connect}' http://$HOST:$PORT/small)" >> "$results"
  done
done
# What the gateway adds to the sandbox's setup (TAP, addresses, stack).
for r in $(seq "$CONNECTS"); do
  for net in none $HOST:$PORT; do
    "$tmp/airlock" run --workspace "$ws" --net "$net" --report "$tmp/report.json" -- true
    echo "setup $net $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["timings"]["setup_ns"])' "$tmp/report.json")" >> "$results"
  done
done

python3 - "$results" "$SIZE_MIB" "$ROUNDS" "$CONNECTS" <<'EOF'
import statistics, sys, platform, os
rows = [l.split() for l in open(sys.argv[1])]
size, rounds, connects = sys.argv[2], sys.argv[3], sys.argv[4]
def vals(kind, name): return [float(r[2]) for r in rows if r[0] == kind and r[1] == name]
med = statistics.median
def p90(v): v = sorted(v); return v[min(len(v) - 1, int(round(0.9 * (len(v) - 1))))]
cfgs = ("direct", "allowlist", "netall")
dl = {c: med(vals("download", c)) / 2**20 for c in cfgs}
sh = {c: med(vals("shaped", c)) / 2**20 for c in cfgs if vals("shaped", c)}
co = {c: med(vals("connect", c)) * 1e3 for c in cfgs}
co90 = {c: p90(vals("connect", c)) * 1e3 for c in cfgs}
cc = {c: med(vals("curlconnect", c)) * 1e3 for c in cfgs}
su = {n: med(vals("setup", n)) / 1e6 for n in ("none", "10.213.20.2:8080")}
print(f"## Egress\n")
print(f"`bench/egress.sh`: {size} MiB over HTTP from a test host in a network namespace on a veth pair,")
print(f"median of {rounds} interleaved downloads per configuration; connect time median of {connects} runs.")
print(f"Host: {os.cpu_count()} CPUs, kernel {platform.release()}.\n")
print("| configuration | veth MiB/s | ratio | 1 Gbit/s link MiB/s | ratio | first connect() ms (median / p90) | added ms | curl time_connect ms |")
print("|---|---|---|---|---|---|---|---|")
names = {"direct": "unsandboxed curl", "allowlist": "airlock run --net 10.213.20.2:8080", "netall": "airlock run --net all,10.213.20.2:8080"}
for c in cfgs:
    shaped = f"{sh[c]:.0f} | {sh[c] / sh['direct']:.2f}" if sh else "- | -"
    print(f"| {names[c]} | {dl[c]:.0f} | {dl[c] / dl['direct']:.2f} | {shaped} | {co[c]:.3f} / {co90[c]:.3f} | {co[c] - co['direct']:+.3f} | {cc[c]:.3f} |")
print(f"\nSandbox setup (Start to exec, median): --net none {su['none']:.1f} ms, allowlist {su['10.213.20.2:8080']:.1f} ms "
      f"(+{su['10.213.20.2:8080'] - su['none']:.1f} ms for the TAP device and the gateway).")
EOF
