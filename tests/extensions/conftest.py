"""Fixtures for the DATUS extension execution tests: the shop example DB and the mini shop (see enginekit)."""

from __future__ import annotations

from enginekit import (  # noqa: F401 - fixtures
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
