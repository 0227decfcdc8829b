"""Dialect gates for window functions (WM "Function registry"): a structured error, never SQL
the warehouse would reject."""

from __future__ import annotations

from dosi.errors import QueryError
from dosi.plan.dialect_facts import PlanDialect
from dosi.query.resolve import ResolvedQuery


def check_window_gates(rq: ResolvedQuery, dialect: PlanDialect) -> None:
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
