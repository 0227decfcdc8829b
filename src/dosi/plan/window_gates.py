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
            raise _unsupported(m.name, fn, dialect)


def _unsupported(metric: str, fn: str, dialect: PlanDialect) -> QueryError:
    since = dialect.window_function_since(fn)
    if since is None:
        return QueryError(
            "dialect_unsupported_window_function",
            f"window metric `{metric}` needs {fn.upper()} as a window function, which "
            f"{dialect.key} does not support",
            metrics=[metric],
            hint="query this metric on another engine, or precompute it in the dataset SQL",
        )
    version = ".".join(str(p) for p in since)
    return QueryError(
        "dialect_unsupported_window_function",
        f"window metric `{metric}` needs {fn.upper()} as a window function, which "
        f"{dialect.key} servers before {version} do not support (the server's version is not "
        "known, or older)",
        metrics=[metric],
        hint=f"on a {dialect.key} {version}+ server, declare the connection option "
        f"`server_version` or compile for `{dialect.key}@<version>`; otherwise query this "
        "metric on another engine",
    )
