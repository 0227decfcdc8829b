"""Fixtures for the D-CONFORM tests (see netbarkit)."""

from __future__ import annotations

from netbarkit import netbar, netbar_db, netbar_ref, netbar_run, variant_run  # noqa: F401
