"""The serving limits every frontend shares (REST, MCP, the PostgreSQL wire server): how many
rows and bytes an answer may hold, the whole-request timeout and the pool's memory budget
(issue 29, item 1). Server-wide values come from `dosi serve` flags or the environment
(`DOSI_MAX_ROWS`, `DOSI_MAX_RESULT_BYTES`, `DOSI_MEMORY_BUDGET`); a request may ask for
less, never for more.

A refused answer is `result_too_large` naming the limit; `suggested_retry` is the same
request with a `limit` (a LIMIT for SQL) that fits."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sqlglot
from sqlglot import exp

from dosi.errors import ArgumentError, OsiError
from dosi.execute.budget import ResultBudget

DEFAULT_MAX_ROWS = 100_000
DEFAULT_MAX_BYTES = 64 * 1000 * 1000
_UNITS = {
    "": 1,
    "B": 1,
    "KB": 1000,
    "MB": 1000**2,
    "GB": 1000**3,
    "TB": 1000**4,
    "KIB": 1 << 10,
    "MIB": 1 << 20,
    "GIB": 1 << 30,
    "TIB": 1 << 40,
}


def parse_size(value: str | int, what: str) -> int:
    """A byte count written as digits with an optional unit ("64MB", "2GiB", "1000000")."""
    if isinstance(value, int) and not isinstance(value, bool):
        number, unit = value, ""
    else:
        text = str(value).strip().upper().replace(" ", "")
        digits = text.rstrip("KMGTIB")
        unit = text[len(digits) :]
        if not digits.isdigit() or len(digits) > 15 or unit not in _UNITS:
            raise ArgumentError(
                f"{what} must be a size such as 64MB or 2GB, got {str(value)[:40]!r}"
            )
        number = int(digits)
    if number <= 0:
        raise ArgumentError(f"{what} must be more than 0 bytes")
    return number * _UNITS[unit]


def positive_count(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ArgumentError(f"{what} must be a whole number above 0")
    text = str(value).strip()
    if not text.isdigit() or len(text) > 15 or int(text) <= 0:
        raise ArgumentError(f"{what} must be a whole number above 0, got {text[:40]!r}")
    return int(text)


@dataclass(frozen=True)
class ServeLimits:
    """Server-wide limits; None: no limit."""

    max_rows: int | None = DEFAULT_MAX_ROWS
    max_bytes: int | None = DEFAULT_MAX_BYTES
    timeout: float | None = 30.0

    def budget(
        self, rows: Any = None, size: Any = None, timeout: float | None = None
    ) -> ResultBudget:
        """The budget of one request that asked for `rows` / `size` (at most the server's)."""
        max_rows = _at_most(
            self.max_rows, None if rows is None else positive_count(rows, "max_rows")
        )
        max_bytes = _at_most(
            self.max_bytes, None if size is None else parse_size(size, "max_bytes")
        )
        return ResultBudget(max_rows, max_bytes, self.timeout if timeout is None else timeout)


def _at_most(server: int | None, asked: int | None) -> int | None:
    if asked is None:
        return server
    return asked if server is None else min(server, asked)


def limits_from_env(
    max_rows: int | None = None,
    max_bytes: str | int | None = None,
    timeout: float | None = 30.0,
    env: Mapping[str, str] | None = None,
) -> ServeLimits:
    """Flags first, then `DOSI_MAX_ROWS` / `DOSI_MAX_RESULT_BYTES`, then the defaults; 0 turns
    a limit off."""
    env = os.environ if env is None else env
    rows_raw: Any = max_rows if max_rows is not None else env.get("DOSI_MAX_ROWS")
    bytes_raw: Any = max_bytes if max_bytes is not None else env.get("DOSI_MAX_RESULT_BYTES")
    rows = (
        DEFAULT_MAX_ROWS
        if rows_raw in (None, "")
        else _off_or(rows_raw, positive_count, "max_rows")
    )
    size = (
        DEFAULT_MAX_BYTES
        if bytes_raw in (None, "")
        else _off_or(bytes_raw, parse_size, "max_result_bytes")
    )
    return ServeLimits(rows, size, timeout)


def memory_budget_from(value: str | int | None, env: Mapping[str, str] | None = None) -> Any:
    """The pool's memory budget in bytes: the flag, `DOSI_MEMORY_BUDGET`, else None (the
    holder's default: half the machine's memory)."""
    env = os.environ if env is None else env
    raw = value if value is not None else env.get("DOSI_MEMORY_BUDGET")
    if raw in (None, ""):
        return None
    return parse_size(raw, "memory_budget")


def _off_or(value: Any, parse: Any, what: str) -> int | None:
    if str(value).strip() == "0":
        return None
    result: int = parse(value, what)
    return result


def fitting_limit(err: OsiError) -> int | None:
    """The row limit a retry of a `result_too_large` answer should carry."""
    detail = err.detail or {}
    fits = [v for v in (detail.get("max_rows"), detail.get("rows_fit")) if isinstance(v, int)]
    return max(1, min(fits)) if fits else None


def with_retry(err: OsiError, body: Any, kind: str) -> OsiError:
    """`err` with `suggested_retry` = the request with a fitting limit: `kind` "query" (a
    metric or detail query: the `limit` key) or "sql" (`{"sql", "params"}`: a LIMIT)."""
    if err.code != "result_too_large" or err.suggested_retry is not None:
        return err
    n = fitting_limit(err)
    if n is None:
        return err
    if kind == "query" and isinstance(body, dict):
        current = body.get("limit")
        limit = n if not isinstance(current, int) or isinstance(current, bool) else min(n, current)
        err.suggested_retry = {**body, "limit": limit}
    elif kind == "sql":
        text = body.get("sql") if isinstance(body, dict) else body
        retried = sql_with_limit(text, n) if isinstance(text, str) else None
        if retried is not None:
            err.suggested_retry = (
                {**body, "sql": retried} if isinstance(body, dict) else {"sql": retried}
            )
    return err


def sql_with_limit(text: str, n: int) -> str | None:
    """A semantic SQL statement with `LIMIT n` (the smaller of n and its own), as sqlglot
    renders it; None when it does not parse as one SELECT."""
    try:
        tree = sqlglot.parse_one(text, dialect="postgres")
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError, RecursionError):
        return None
    if not isinstance(tree, exp.Select):
        return None
    own = tree.args.get("limit")
    value = own.expression if isinstance(own, exp.Limit) else None
    if isinstance(value, exp.Literal) and value.is_int and int(value.this) < n:
        return tree.sql(dialect="postgres")
    return tree.limit(n).sql(dialect="postgres")
