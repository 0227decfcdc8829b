"""Streaming-window boundaries as plain SQL expression trees (sqlglot), for engines without
the window UDFs (`dosi.udf`).

The SQL of streaming-window GROUP BY items (`dosi.sql.stream_window`) is built from these, so
the same query runs on DuckDB, PostgreSQL and warehouses. They live in the SQL layer, not in
`dosi.udf`, because they render per dialect: `dosi.udf` (the UDFs, their Python reference and
argument rules) imports nothing of `dosi.sql`. Every builder takes the timestamp as a sqlglot
expression and the lengths as integers in milliseconds (parse them with
`dosi.udf.parse_interval_ms`), validates them like the UDFs do (`QueryError` code
``invalid_window_argument``), and returns a new tree; nothing is built by pasting text.

Semantics match `dosi.udf.reference` (window-udf.md formulas as decided for dosi): floor toward
minus infinity, pre-1970 included; results are microsecond timestamps without time zone (or
BIGINT epoch milliseconds with ``output="epoch_ms"``). The arithmetic runs on epoch
microseconds for timestamp input (exactly the millisecond formulas, see
`dosi.udf.duckdb_macros`) and on
epoch milliseconds for ``ts_kind="epoch_ms"`` (an integer column holding epoch milliseconds).
`%` is made floor-modulo as ``((a % b) + b) % b``, which is right whether a dialect's `%`
truncates or floors.

Dialects: those whose class in `dosi.sql.dialects` says ``streaming`` (the epoch conversions
are the dialect's `epoch_us` / `from_epoch`); a time-zone-aware input counts as its UTC
instant. Verified by execution on every engine of tests/conformance.
"""

from __future__ import annotations

from typing import Final, Literal

from sqlglot import exp

from dosi.errors import QueryError, closest
from dosi.sql.dialects import Dialect, get_dialect, streaming_dialects
from dosi.udf.validation import check_cumulate, check_hop, check_offset, check_window_length

__all__ = [
    "SUPPORTED_DIALECTS",
    "Output",
    "TsKind",
    "cumulate_end_expr",
    "cumulate_start_expr",
    "epoch_us_expr",
    "hop_end_expr",
    "hop_start_expr",
    "session_expr",
    "tumble_end_expr",
    "tumble_start_expr",
]

TsKind = Literal["timestamp", "epoch_ms"]
Output = Literal["timestamp", "epoch_ms"]

SUPPORTED_DIALECTS: Final = streaming_dialects()


def _check_dialect(dialect: str) -> Dialect:
    try:
        found = get_dialect(dialect)
    except QueryError:
        found = None
    if found is None or not found.streaming:
        raise QueryError(
            "unsupported_dialect",
            f"window boundaries cannot be rendered for dialect {dialect!r}",
            candidates=closest(dialect, SUPPORTED_DIALECTS) or SUPPORTED_DIALECTS,
            hint="supported: " + ", ".join(SUPPORTED_DIALECTS),
        )
    return found


def _num(value: int) -> exp.Expression:
    return exp.Literal.number(value) if value >= 0 else exp.Paren(this=exp.Literal.number(value))


def _add(a: exp.Expression, value: int | exp.Expression) -> exp.Expression:
    """``a + value`` (a literal 0 is dropped, a negative literal becomes a subtraction)."""
    if isinstance(value, int):
        if value == 0:
            return a
        if value < 0:
            return exp.Sub(this=a, expression=exp.Literal.number(-value))
        return exp.Add(this=a, expression=exp.Literal.number(value))
    return exp.Add(this=a, expression=value)


def _sub(a: exp.Expression, value: int | exp.Expression) -> exp.Expression:
    if isinstance(value, int):
        return _add(a, -value)
    return exp.Sub(this=a, expression=value)


def _floor_mod(a: exp.Expression, b: int) -> exp.Expression:
    """``((a % b) + b) % b``: modulo rounded toward minus infinity, for b > 0."""
    truncated = exp.Paren(this=exp.Mod(this=exp.Paren(this=a), expression=_num(b)))
    return exp.Paren(this=exp.Mod(this=exp.Paren(this=_add(truncated, b)), expression=_num(b)))


def epoch_us_expr(ts: exp.Expression, dialect: str = "duckdb") -> exp.Expression:
    """Epoch microseconds (BIGINT) of a timestamp/timestamptz/date expression."""
    return _check_dialect(dialect).epoch_us(ts.copy())


def timestamp_from_epoch(units: exp.Expression, per_ms: int, dialect: str) -> exp.Expression:
    """Timestamp (µs, no time zone) from epoch microseconds (per_ms=1000) or ms (per_ms=1)."""
    return _check_dialect(dialect).from_epoch(units, per_ms)


def _units(ts: exp.Expression, dialect: str, ts_kind: TsKind) -> tuple[exp.Expression, int]:
    """The timestamp as integer units and the units per millisecond."""
    _check_dialect(dialect)
    if ts_kind == "epoch_ms":
        return exp.Cast(this=ts.copy(), to=exp.DataType.build("BIGINT")), 1
    if ts_kind == "timestamp":
        return epoch_us_expr(ts, dialect), 1000
    raise QueryError(
        "invalid_window_argument",
        f"ts_kind must be 'timestamp' or 'epoch_ms', got {ts_kind!r}",
        candidates=["timestamp", "epoch_ms"],
    )


def _finish(units: exp.Expression, per_ms: int, dialect: str, output: Output) -> exp.Expression:
    if output == "timestamp":
        return timestamp_from_epoch(units, per_ms, dialect)
    if output == "epoch_ms":
        if per_ms == 1:
            return units
        whole = exp.IntDiv(this=exp.Paren(this=units), expression=exp.Literal.number(per_ms))
        return exp.Cast(this=whole, to=exp.DataType.build("BIGINT"))
    raise QueryError(
        "invalid_window_argument",
        f"output must be 'timestamp' or 'epoch_ms', got {output!r}",
        candidates=["timestamp", "epoch_ms"],
    )


def _tumble(
    ts: exp.Expression, interval_ms: int, offset_ms: int, dialect: str, ts_kind: TsKind, end: bool
) -> tuple[exp.Expression, int]:
    t, k = _units(ts, dialect, ts_kind)
    start = _sub(t, _floor_mod(_sub(t.copy(), offset_ms * k), interval_ms * k))
    return (_add(start, interval_ms * k) if end else start), k


def tumble_start_expr(
    ts: exp.Expression,
    interval_ms: int,
    offset_ms: int = 0,
    dialect: str = "duckdb",
    *,
    ts_kind: TsKind = "timestamp",
    output: Output = "timestamp",
) -> exp.Expression:
    """``tumble(ts, interval, offset)``: start of the tumbling window containing `ts`."""
    check_window_length("tumble", "interval", interval_ms)
    check_offset("tumble", offset_ms)
    units, k = _tumble(ts, interval_ms, offset_ms, dialect, ts_kind, end=False)
    return _finish(units, k, dialect, output)


def tumble_end_expr(
    ts: exp.Expression,
    interval_ms: int,
    offset_ms: int = 0,
    dialect: str = "duckdb",
    *,
    ts_kind: TsKind = "timestamp",
    output: Output = "timestamp",
) -> exp.Expression:
    """``tumble_end(ts, interval, offset)``: exclusive end (start + interval)."""
    check_window_length("tumble_end", "interval", interval_ms)
    check_offset("tumble_end", offset_ms)
    units, k = _tumble(ts, interval_ms, offset_ms, dialect, ts_kind, end=True)
    return _finish(units, k, dialect, output)


def _hop(
    ts: exp.Expression,
    slide_ms: int,
    size_ms: int,
    offset_ms: int,
    dialect: str,
    ts_kind: TsKind,
    end: bool,
) -> tuple[exp.Expression, int]:
    t, k = _units(ts, dialect, ts_kind)
    adj = _sub(_add(_sub(t, size_ms * k), slide_ms * k), offset_ms * k)
    start = _add(_sub(adj, _floor_mod(adj.copy(), slide_ms * k)), offset_ms * k)
    return (_add(start, size_ms * k) if end else start), k


def hop_start_expr(
    ts: exp.Expression,
    slide_ms: int,
    size_ms: int,
    offset_ms: int = 0,
    dialect: str = "duckdb",
    *,
    ts_kind: TsKind = "timestamp",
    output: Output = "timestamp",
) -> exp.Expression:
    """``hop(ts, slide, size, offset)``: start of the earliest sliding window containing `ts`."""
    check_hop("hop", slide_ms, size_ms, offset_ms)
    units, k = _hop(ts, slide_ms, size_ms, offset_ms, dialect, ts_kind, end=False)
    return _finish(units, k, dialect, output)


def hop_end_expr(
    ts: exp.Expression,
    slide_ms: int,
    size_ms: int,
    offset_ms: int = 0,
    dialect: str = "duckdb",
    *,
    ts_kind: TsKind = "timestamp",
    output: Output = "timestamp",
) -> exp.Expression:
    """``hop_end(ts, slide, size, offset)``: exclusive end of that window (start + size)."""
    check_hop("hop_end", slide_ms, size_ms, offset_ms)
    units, k = _hop(ts, slide_ms, size_ms, offset_ms, dialect, ts_kind, end=True)
    return _finish(units, k, dialect, output)


def _cumulate(
    ts: exp.Expression, size_ms: int, dialect: str, ts_kind: TsKind, end: bool
) -> tuple[exp.Expression, int]:
    t, k = _units(ts, dialect, ts_kind)
    start = _sub(t, _floor_mod(t.copy(), size_ms * k))
    return (_add(start, size_ms * k) if end else start), k


def cumulate_start_expr(
    ts: exp.Expression,
    step_ms: int,
    size_ms: int,
    dialect: str = "duckdb",
    *,
    ts_kind: TsKind = "timestamp",
    output: Output = "timestamp",
) -> exp.Expression:
    """``cumulate(ts, step, size)``: start of the size-aligned epoch containing `ts`."""
    check_cumulate("cumulate", step_ms, size_ms)
    units, k = _cumulate(ts, size_ms, dialect, ts_kind, end=False)
    return _finish(units, k, dialect, output)


def cumulate_end_expr(
    ts: exp.Expression,
    step_ms: int,
    size_ms: int,
    dialect: str = "duckdb",
    *,
    ts_kind: TsKind = "timestamp",
    output: Output = "timestamp",
) -> exp.Expression:
    """``cumulate_end(ts, step, size)``: exclusive end of that epoch (start + size)."""
    check_cumulate("cumulate_end", step_ms, size_ms)
    units, k = _cumulate(ts, size_ms, dialect, ts_kind, end=True)
    return _finish(units, k, dialect, output)


def session_expr(
    ts: exp.Expression,
    gap_ms: int,
    dialect: str = "duckdb",
    *,
    ts_kind: TsKind = "timestamp",
    output: Output = "timestamp",
) -> exp.Expression:
    """``session(ts, gap)``: `ts` as a microsecond timestamp (or floored epoch ms); gap unused."""
    check_window_length("session", "gap", gap_ms)
    t, k = _units(ts, dialect, ts_kind)
    if output == "epoch_ms" and k != 1:
        t = _sub(t, _floor_mod(t.copy(), k))
    return _finish(t, k, dialect, output)
