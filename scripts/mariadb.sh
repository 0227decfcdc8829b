#!/usr/bin/env bash
# Starts a throwaway MariaDB on 127.0.0.1:33306 (root, no password) for the conformance tests
# and prints its connection URI; reuses a server already answering on that port. Installs the
# server from Debian's packages when missing.
# Usage: export DOSI_TEST_MARIADB="$(bash scripts/mariadb.sh)"
set -euo pipefail
PORT="${DOSI_MARIADB_PORT:-33306}"
DSN="mysql://root@127.0.0.1:$PORT/"
if command -v mariadb >/dev/null && mariadb -h127.0.0.1 -P"$PORT" -uroot -e "select 1" >/dev/null 2>&1; then
  echo "$DSN"
  exit 0
fi
if ! command -v mariadbd >/dev/null && [ ! -x /usr/sbin/mariadbd ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server) >&2
  else
    echo "mariadb.sh: no MariaDB server and no way to install one" >&2
    exit 1
  fi
fi
MARIADBD=$(command -v mariadbd || echo /usr/sbin/mariadbd)
DATA=$(mktemp -d /tmp/dosi-mariadb-XXXXXX)
USER_OPT=()
if [ "$(id -u)" = 0 ]; then
  chown mysql "$DATA" 2>/dev/null && USER_OPT=(--user=mysql) || USER_OPT=(--user=root)
fi
mariadb-install-db "${USER_OPT[@]}" --datadir="$DATA" --auth-root-authentication-method=normal \
  --skip-test-db >/dev/null 2>&1
nohup "$MARIADBD" "${USER_OPT[@]}" --datadir="$DATA" --port="$PORT" --bind-address=127.0.0.1 \
  --socket="$DATA/mariadb.sock" --pid-file="$DATA/mariadb.pid" --skip-log-bin \
  --innodb-buffer-pool-size=64M >"$DATA/log" 2>&1 &
for _ in $(seq 1 60); do
  if mariadb -h127.0.0.1 -P"$PORT" -uroot -e "select 1" >/dev/null 2>&1; then
    echo "$DSN"
    exit 0
  fi
  sleep 0.5
done
echo "mariadb.sh: the server did not start; see $DATA/log" >&2
exit 1
