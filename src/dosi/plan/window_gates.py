"""Dialect gates for window functions (WM "Function registry"): a structured error, never SQL
the warehouse would reject. A spec names its function and (1.14) the frame clauses beyond it
that engines differ on (`WindowSpec.window_features`: GROUPS units, EXCLUDE, IGNORE NULLS);
each is looked up in the dialect's facts the same way."""

from __future__ import annotations

from dosi.errors import QueryError
from dosi.plan.dialect_facts import PlanDialect
from dosi.query.resolve import ResolvedQuery

#: what the message calls each clause a dialect may lack
_CLAUSES: dict[str, str] = {
    "groups": "GROUPS frame units",
    "exclude": "frame exclusion (EXCLUDE ...)",
    "ignore_nulls": "IGNORE NULLS",
    "range_interval": "a RANGE frame with an INTERVAL bound (window `span`)",
}


def check_window_gates(rq: ResolvedQuery, dialect: PlanDialect) -> None:
    for m in rq.planned_metrics:
        w = m.window
        if w is None:
            continue
        fn = w.window_function
        for need in (*((fn,) if fn is not None else ()), *w.window_features):
            if not dialect.supports_window_function(need):
                raise _unsupported(m.name, need, fn, dialect)


def _unsupported(metric: str, need: str, fn: str | None, dialect: PlanDialect) -> QueryError:
    if need in _CLAUSES:
        what = f"{_CLAUSES[need]} in {fn.upper() if fn else 'a'} window function"
    else:
        what = f"{need.upper()} as a window function"
    since = dialect.window_function_since(need)
    if since is None:
        return QueryError(
            "dialect_unsupported_window_function",
            f"window metric `{metric}` needs {what}, which {dialect.key} does not support",
            metrics=[metric],
            hint="query this metric on another engine, or precompute it in the dataset SQL",
        )
    version = ".".join(str(p) for p in since)
    return QueryError(
        "dialect_unsupported_window_function",
        f"window metric `{metric}` needs {what}, which {dialect.key} servers before {version} "
        "do not support (the server's version is not known, or older)",
        metrics=[metric],
        hint=f"on a {dialect.key} {version}+ server, declare the connection option "
        f"`server_version` or compile for `{dialect.key}@<version>`; otherwise query this "
        "metric on another engine",
    )
