"""Makes the shared test kit (tests/engine/enginekit.py) importable by name from every folder."""

from __future__ import annotations

import sys
from pathlib import Path

_KIT_DIR = str(Path(__file__).resolve().parent / "engine")
if _KIT_DIR not in sys.path:
    sys.path.insert(0, _KIT_DIR)
