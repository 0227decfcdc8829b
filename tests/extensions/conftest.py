"""Fixtures for the DATUS extension execution tests: the shop example DB and the mini shop (see enginekit)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_KIT = Path(__file__).resolve().parents[1] / "engine" / "enginekit.py"
if "enginekit" not in sys.modules:
    _spec = importlib.util.spec_from_file_location("enginekit", _KIT)
    assert _spec is not None and _spec.loader is not None
    _mod = importlib.util.module_from_spec(_spec)
    sys.modules["enginekit"] = _mod
    _spec.loader.exec_module(_mod)

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
