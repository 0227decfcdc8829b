"""Execution options an Engine hands to every runner: per-query timeout, memory limit and the
extension opt-in (docs/untrusted-queries.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from dosi.errors import ExecuteError

#: Default per-query timeout in seconds (`Engine(query_timeout=...)`; None disables it).
DEFAULT_QUERY_TIMEOUT: float = 120.0


@dataclass(frozen=True)
class ExecOptions:
    """How dosi runs SQL: limits and the DuckDB lockdown opt-out."""

    query_timeout: float | None = DEFAULT_QUERY_TIMEOUT
    memory_limit: str | None = None  # e.g. "2GB"; None keeps the database's default
    allow_extensions: bool = False  # True: external access and extension auto-loading stay on
    # DuckDB files attached read-only beside the database, as (catalog name, path): the
    # rollup store (dosi.execute.rollup_store); a missing file is not attached
    attach: tuple[tuple[str, str], ...] = ()
    # every dataset of the model reads a table of the database (no file, no SQL source): a
    # database whose tables are all smaller than one DuckDB row group then runs each
    # statement on one thread (dosi.execute.duckdb_runner.SMALL_TABLE_ROWS)
    tables_only: bool = False


def check_timeout(value: Any, name: str = "query_timeout") -> float | None:
    """A timeout in seconds: a positive finite number, or None for no timeout."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ExecuteError("config", f"`{name}` must be a number of seconds or None")
    seconds = float(value)
    if not math.isfinite(seconds) or seconds <= 0 or seconds > 7 * 86400:
        raise ExecuteError(
            "config",
            f"`{name}` must be between 0 and 604800 seconds (one week), or None to disable it",
        )
    return seconds


def check_memory_limit(value: Any) -> str | None:
    """A DuckDB memory size such as "512MB" or "4GB" (digits and a unit only)."""
    if value is None:
        return None
    text = str(value).strip() if isinstance(value, (str, int)) else ""
    digits = text.rstrip("KMGTiBb ").strip()
    unit = text[len(digits) :].strip().upper()
    if (
        not digits.isdigit()
        or len(digits) > 9
        or unit not in ("", "B", "KB", "MB", "GB", "TB", "KIB", "MIB", "GIB", "TIB")
    ):
        raise ExecuteError(
            "config", f"`memory_limit` must be a size such as '2GB', got {str(value)[:40]!r}"
        )
    return f"{int(digits)}{unit or 'B'}"
