"""The dialect facts the planner reads, as a protocol: plan/ never imports the SQL layer.

The planner decides the shape of a plan before any SQL exists, and a few of its choices are a
warehouse's: how branches merge (a NULL-safe FULL JOIN or the union of their keys) and which
window functions exist (a structured error before any SQL). `dosi.sql.dialects.Dialect` states
these facts; the caller hands the dialect in and the planner reads only what is listed here.
"""

from __future__ import annotations

from typing import Protocol


class PlanDialect(Protocol):
    """What the planner asks of a dialect (each a fact of `dosi.sql.dialects.Dialect`)."""

    @property
    def key(self) -> str:
        """The name dosi knows the dialect by, for error messages."""
        ...

    @property
    def null_safe_full_join(self) -> bool:
        """FULL JOIN accepts an IS NOT DISTINCT FROM condition (the merge strategy)."""
        ...

    def supports_window_function(self, function: str) -> bool:
        """The warehouse has `function` as a window function (WM "Function registry")."""
        ...

    @property
    def spine_series(self) -> str | None:
        """How the dialect generates a time series for a spine (None: it cannot)."""
        ...

    def window_function_since(self, function: str) -> tuple[int, ...] | None:
        """The first server version with `function` (None: no version has it), for the gate's
        hint: a version fact lifts it."""
        ...
