#!/usr/bin/env bash
# The main job: build the shop example database and answer showcase queries on embedded DuckDB.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh demo
.venv/bin/dosi demo "$@"
