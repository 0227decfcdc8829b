"""Bound parameters (`$1`, `$2`, ... of the extended query protocol) as literals.

A value becomes a literal of its own kind (strings and temporal values as strings, which
compare with any column type in `where_sql`), so the statement is translated exactly as if
the client had written the constants itself.
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

from sqlglot import exp

from dosi.query.semantic_sql.errors import SYNTAX, refuse


def literal(value: Any) -> exp.Expression:
    if value is None:
        return exp.null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, (int, decimal.Decimal)):
        return exp.Literal.number(str(value))
    if isinstance(value, float):
        return exp.Literal.number(repr(value))
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return exp.Literal.string(
            value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()
        )
    if isinstance(value, bytes):
        return exp.Literal.string(value.decode("utf-8", "replace"))
    return exp.Literal.string(str(value))


def bind_parameters(stmt: exp.Expression, params: list[Any]) -> exp.Expression:
    """`stmt` with every `$n` replaced by params[n - 1] (`stmt` is changed in place)."""

    def swap(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Parameter):
            try:
                n = int(node.name)
            except ValueError:
                n = 0
            if not 1 <= n <= len(params):
                raise refuse(SYNTAX, f"there is no parameter ${node.name} ({len(params)} bound)")
            return literal(params[n - 1])
        if isinstance(node, exp.Placeholder):
            raise refuse(SYNTAX, "placeholders other than $1, $2, ... are not supported")
        return node

    return stmt.transform(swap, copy=False)
