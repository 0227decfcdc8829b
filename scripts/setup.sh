#!/usr/bin/env bash
# Creates .venv (once) and installs dosi into it, as much as one profile needs:
#   bash scripts/setup.sh demo   the core (DuckDB, pyarrow, sqlglot, click, rich): the demo
#   bash scripts/setup.sh dev    the core plus the development extras and every engine's client
# A profile installs once; pyproject.toml being newer than the profile's stamp installs it
# again. The dev set holds the demo's, so a venv set up for the tests also runs the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE="${1:-dev}"
case "$PROFILE" in
  demo) spec="." ;;
  dev) spec=".[dev,engines]" ;;
  *) echo "setup.sh: unknown profile '$PROFILE' (demo or dev)" >&2; exit 2 ;;
esac
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
fresh() { [ -f "$1" ] && [ ! pyproject.toml -nt "$1" ]; }
if fresh ".venv/.dosi-installed-$PROFILE" || { [ "$PROFILE" = demo ] && fresh .venv/.dosi-installed-dev; }; then
  exit 0
fi
# the package itself is editable: source changes need no new install
.venv/bin/python -m pip install --quiet -e "$spec"
touch ".venv/.dosi-installed-$PROFILE"
