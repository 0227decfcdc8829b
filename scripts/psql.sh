#!/usr/bin/env bash
# Makes sure Debian's psql (postgresql-client) is there for the PostgreSQL wire frontend's
# psql test; installs it when missing (root with apt-get), else says why and fails.
set -euo pipefail
if command -v psql >/dev/null; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-client) >&2
  command -v psql >/dev/null
else
  echo "psql.sh: psql missing and no way to install postgresql-client" >&2
  exit 1
fi
