#!/usr/bin/env bash
# Searches the hypothesis property tests with fresh random examples (CI runs them derandomized).
# Usage: bash scripts/property_soak.sh [rounds]   (each round draws new examples)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-5}"
files=$(grep -rl "from hypothesis import" tests --include='test_*.py')
for ((i = 1; i <= rounds; i++)); do
  echo "round $i of $rounds"
  DOSI_HYPOTHESIS=random .venv/bin/python -m pytest -q -p no:cacheprovider $files
done
