"""Makes the shared test kits (tests/kit/: enginekit, conformkit, portkit, servekit, ...)
importable by name from every folder, and offers enginekit's shop and mini-shop fixtures to
every folder (a folder's own conftest may override them)."""

from __future__ import annotations

import sys
from pathlib import Path

_KIT_DIR = str(Path(__file__).resolve().parent / "kit")
if _KIT_DIR not in sys.path:
    sys.path.insert(0, _KIT_DIR)

from enginekit import (  # noqa: E402, F401 - fixtures
    mini,
    mini_db,
    mini_engine,
    mini_ref,
    mini_run,
    shop,
    shop_db,
    shop_ref,
    shop_run,
)
