"""Dialect gates for window functions (WM "Function registry"): a structured error, never SQL
the warehouse would reject."""

from __future__ import annotations

from dosi.errors import QueryError
from dosi.query.resolve import ResolvedQuery
from dosi.sql.dialects import Dialect


def check_window_gates(rq: ResolvedQuery, dialect: Dialect) -> None:
    for m in rq.planned_metrics:
        w = m.window
        fn = w.window_function if w is not None else None
        if fn is not None and not dialect.supports_window_function(fn):
            raise QueryError(
                "dialect_unsupported_window_function",
                f"window metric `{m.name}` needs {fn.upper()} as a window function, which "
                f"{dialect.key} does not support",
                metrics=[m.name],
                hint="query this metric on another engine, or precompute it in the dataset SQL",
            )
