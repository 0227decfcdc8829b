#!/usr/bin/env bash
# Lint and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh dev
.venv/bin/ruff check src tests bench examples
.venv/bin/python -m pytest "$@"
