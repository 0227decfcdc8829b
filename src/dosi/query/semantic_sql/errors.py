"""The refusals of semantic SQL: each names the construct and the way to write it."""

from __future__ import annotations

from collections.abc import Iterable

from sqlglot import exp

from dosi.errors import QueryError

#: Stable codes (the PostgreSQL frontend maps each to a SQLSTATE).
SYNTAX = "sql_syntax_error"
UNSUPPORTED = "sql_unsupported"
UNKNOWN_TABLE = "sql_unknown_table"
UNKNOWN_COLUMN = "sql_unknown_column"
AGGREGATE = "sql_aggregate_mismatch"
GROUPING = "sql_grouping_error"
DIMENSION_ONLY = "not_implemented"


def refuse(
    code: str, message: str, *, hint: str | None = None, candidates: Iterable[str] = ()
) -> QueryError:
    return QueryError(code, message, hint=hint, candidates=candidates)


def snippet(node: exp.Expression, limit: int = 120) -> str:
    """The construct as SQL text, cut to `limit` characters, for a message."""
    try:
        text = node.sql(dialect="postgres")
    except Exception:
        text = type(node).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def unsupported(node: exp.Expression, what: str, hint: str | None = None) -> QueryError:
    return refuse(
        UNSUPPORTED,
        f"{what} is not a semantic query construct: `{snippet(node)}`",
        hint=hint or "see docs/serving/sql.md for the SQL a semantic table accepts",
    )
