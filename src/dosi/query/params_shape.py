"""The shape of the `params` query key (CORE-Q-12): an object mapping a parameter name to a
scalar or a list of scalars. Names and values are checked against the declarations later
(`dosi.query.params`); here only the JSON shape, kept hashable for the plan cache."""

from __future__ import annotations

from typing import Any

from dosi.errors import QueryError, QueryShapeError, bounded
from dosi.ext.params import bind_markers

_SCALARS = (str, int, float, bool)


def parse_params(raw: Any) -> tuple[tuple[str, Any], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise QueryShapeError(
            "invalid_query",
            f"`params` must be an object mapping a parameter name to a value or a list of "
            f"values, got {bounded(raw, 60)}",
            hint='e.g. "params": {"n": 6} or "params": {"n": [3, 6, 12]}',
        )
    out: list[tuple[str, Any]] = []
    for name, value in raw.items():
        if not isinstance(name, str) or not name:
            raise QueryShapeError("invalid_query", "`params` keys are parameter names")
        if isinstance(value, list):
            if not all(isinstance(v, _SCALARS) for v in value):
                raise QueryShapeError(
                    "invalid_query",
                    f"`params.{name}` lists a value that is not a number or a string",
                )
            out.append((name, tuple(value)))
        elif isinstance(value, _SCALARS):
            out.append((name, value))
        else:
            raise QueryShapeError(
                "invalid_query",
                f"`params.{name}` must be a number, a string or a list of them, got "
                f"{bounded(value, 60)}",
            )
    return tuple(out)


def params_to_dict(params: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in params}


def check_no_bind_marker(where_sql: str) -> None:
    """PARAM-SLOT-10 / CORE-Q-09: a `:name` bind marker in a query's where_sql is an error,
    never a silent literal: parameters fill declared slots of metrics only."""
    names = bind_markers(where_sql)
    if names:
        raise QueryError(
            "unsupported_filter",
            f"bind parameter :{names[0]} is not allowed in a where filter",
            hint="inline the value, or declare it as a metric parameter (D-PARAM)",
        )
