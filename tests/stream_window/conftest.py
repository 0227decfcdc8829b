"""Fixtures for these tests; helpers live in streamkit.py (imported by name, not as conftest)."""

from streamkit import engine, run, shop_db, shop_engine, shop_events, stream_db  # noqa: F401
