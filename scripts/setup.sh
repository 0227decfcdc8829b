#!/usr/bin/env bash
# Creates .venv (once) and installs dosi with its development extras. Sourced by demo/test.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.dosi-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  # dev tools plus every engine's Python client (the conformance suite runs on all of them)
  .venv/bin/python -m pip install --quiet -e ".[dev,engines]"
  touch "$stamp"
fi
