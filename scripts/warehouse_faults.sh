#!/usr/bin/env bash
# Recovery on real Spark Connect and ClickHouse servers killed and started again (issue 29,
# item 2). Minutes, not seconds (a Spark Connect server takes 30-60 s to start), so not in CI.
# Needs Java 17 (bash scripts/java.sh) and pyspark[connect] (dosi[spark]); the ClickHouse part
# runs when the Debian clickhouse-server package is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
DOSI_TEST_WAREHOUSE_FAULTS=1 PYTHONPATH="$PWD/src" "$PY" -m pytest -p no:cacheprovider -rA \
  tests/engines/test_warehouse_faults.py "$@"
