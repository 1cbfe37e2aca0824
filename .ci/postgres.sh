#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests, from Debian's postgresql
# package: created in DIR, listening on a free loopback port (and a unix
# socket inside DIR, never /var/run), password-protected, owned by the
# postgres user because initdb refuses to run as root.
#
#   .ci/postgres.sh start DIR   # initdb + start; writes DIR/dsn, prints it
#   .ci/postgres.sh stop DIR    # stop the server and remove DIR
#
# Used by .ci/run, and by hand:
#   d=$(mktemp -d /tmp/airlock-pg.XXXXXX) && .ci/postgres.sh start "$d"
#   export AIRLOCK_TEST_POSTGRES=$(cat "$d/dsn")
#   ...; .ci/postgres.sh stop "$d"
set -euo pipefail

cmd=${1:-}
dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
  echo "usage: $0 start|stop DIR" >&2
  exit 2
fi

# The newest server Debian's packages installed (postgresql depends on
# postgresql-NN, which puts its binaries here).
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
  echo "no PostgreSQL server under /usr/lib/postgresql: apt-get install postgresql" >&2
  exit 1
fi
as_pg() { runuser -u postgres -- "$@"; }

case "$cmd" in
start)
  mkdir -p "$dir"
  chown postgres: "$dir"
  chmod 700 "$dir"
  # A random password: the cluster listens on loopback, where every local
  # user could reach a trust-authenticated server.
  pw=$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')
  printf '%s\n' "$pw" >"$dir/pwfile"
  chown postgres: "$dir/pwfile"
  as_pg "$bindir/initdb" -D "$dir/data" -U postgres --pwfile="$dir/pwfile" \
    --auth-local=scram-sha-256 --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 \
    >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
  rm -f "$dir/pwfile"
  # A free port: the first one from 54320 on that nothing answers on. The
  # server then binds it; if another process took it in between, pg_ctl
  # fails and says so.
  port=54320
  while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
    port=$((port + 1))
    [ "$port" -lt 54420 ] || { echo "no free port in 54320-54419" >&2; exit 1; }
  done
  # fsync stays on (the default): the durability tests SIGKILL daemons and
  # count on what PostgreSQL acknowledged being on disk. max_connections
  # leaves room for the tests' pools and the load benchmark's replicas.
  as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=300" \
    >/dev/null || { tail -20 "$dir/server.log" >&2; exit 1; }
  PGPASSWORD=$pw as_pg "$bindir/createdb" -h 127.0.0.1 -p "$port" -U postgres airlock_test
  dsn="postgres://postgres:$pw@127.0.0.1:$port/airlock_test?sslmode=disable"
  printf '%s\n' "$dsn" >"$dir/dsn"
  chmod 600 "$dir/dsn"
  echo "$dsn"
  ;;
stop)
  if [ -f "$dir/data/postmaster.pid" ]; then
    as_pg "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
  fi
  rm -rf "$dir"
  ;;
*)
  echo "usage: $0 start|stop DIR" >&2
  exit 2
  ;;
esac
