"""Fixtures for these tests; helpers live in udfkit.py (imported by name, not as conftest)."""

from udfkit import dfctx, duck, engine, run_datafusion, run_duckdb  # noqa: F401
