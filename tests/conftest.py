"""Makes the shared test kits (tests/kit/: enginekit, conformkit, portkit, servekit, ...)
importable by name from every folder, and offers enginekit's shop and mini-shop fixtures to
every folder (a folder's own conftest may override them).

Hypothesis runs derandomized (the same examples every run, so CI on a clean clone is
reproducible and a red run names a case that fails again); `DOSI_HYPOTHESIS=random` draws
new examples for a search such as `scripts/property_soak.sh`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from hypothesis import settings

_KIT_DIR = str(Path(__file__).resolve().parent / "kit")
if _KIT_DIR not in sys.path:
    sys.path.insert(0, _KIT_DIR)

settings.register_profile("dosi-ci", derandomize=True, print_blob=True)
settings.register_profile("dosi-random", derandomize=False, print_blob=True)
settings.load_profile("dosi-random" if os.environ.get("DOSI_HYPOTHESIS") == "random" else "dosi-ci")

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
