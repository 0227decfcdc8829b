"""Fixtures for the hostile-input tests: the shop example engine and database (enginekit)."""

from __future__ import annotations

from enginekit import shop, shop_db  # noqa: F401 - fixtures
