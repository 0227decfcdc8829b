#!/usr/bin/env bash
# Starts a throwaway PostgreSQL on 127.0.0.1:55432 (trust auth) for the portability tests and
# prints its psql connection string; reuses a server already answering on that port. Installs
# the server from Debian's packages when missing.
# Usage: export DOSI_TEST_POSTGRES="$(bash scripts/postgres.sh)"
set -euo pipefail
PORT="${DOSI_PG_PORT:-55432}"
DSN="host=127.0.0.1 port=$PORT user=postgres dbname=postgres"
if command -v psql >/dev/null && psql "$DSN" -Atc "select 1" >/dev/null 2>&1; then
  echo "$DSN"
  exit 0
fi
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >&2
    bindir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
  else
    echo "postgres.sh: no PostgreSQL server and no way to install one" >&2
    exit 1
  fi
fi
run() {
  if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "$*"; else sh -c "$*"; fi
}
DATA=$(mktemp -d /tmp/dosi-pg-XXXXXX)
[ "$(id -u)" = 0 ] && chown postgres "$DATA"
run "'$bindir/initdb' -D '$DATA' -A trust -U postgres" >/dev/null
run "'$bindir/pg_ctl' -D '$DATA' -o \"-p $PORT -k /tmp -c listen_addresses=127.0.0.1\" -l '$DATA/log' -w start" >/dev/null
echo "$DSN"
