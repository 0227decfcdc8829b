"""The window functions as vectorized DataFusion scalar UDFs (window-udf.md).

Python UDFs in DataFusion have one exact signature per name (``Signature::exact``), so:

* ``tumble``, ``tumble_end`` (2 args), ``hop``, ``hop_end`` (3 args), ``session`` (2),
  ``cumulate``, ``cumulate_end`` (3) are registered under their spec names;
* the optional-offset forms are registered as ``tumble_offset``, ``tumble_end_offset``,
  ``hop_offset`` and ``hop_end_offset``; `rewrite_for_datafusion` renames 3-argument
  ``tumble``/``tumble_end`` and 4-argument ``hop``/``hop_end`` calls in a sqlglot tree to them.

`ts` is declared ``Timestamp(µs, "UTC")``: DataFusion coerces any timestamp unit, time zone (to
its UTC instant), ``Date32`` and timestamp strings into it (a nanosecond value is truncated to
microseconds by that cast, as DuckDB does). An integer epoch-milliseconds column cannot be
coerced into a timestamp parameter; write ``tumble(to_timestamp_millis(x), ...)``.
Lengths and offsets are ``Interval(MonthDayNano)`` (``INTERVAL '1' MINUTE`` or ``'1 minute'``).
Results are ``Timestamp(µs)`` with no time zone (UDF-GEN-03).

Arithmetic uses pyarrow compute kernels on epoch microseconds (``modulo`` floors like Python's
``%``), equal to the millisecond formulas in `dosi.udf.reference` (see `duckdb_macros`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from dosi.udf.validation import (
    NOT_FIXED_LENGTH,
    NOT_POSITIVE,
    NOT_WHOLE_MS,
    SIZE_NOT_MULTIPLE_OF_STEP,
    SLIDE_LARGER_THAN_SIZE,
    STEP_LARGER_THAN_SIZE,
    engine_message,
)

__all__ = ["OFFSET_VARIANTS", "register_datafusion", "rewrite_for_datafusion"]

TS_TYPE: Final = pa.timestamp("us", "UTC")
INTERVAL_TYPE: Final = pa.month_day_nano_interval()
RESULT_TYPE: Final = pa.timestamp("us")

#: Spec call (name, argument count with offset) -> DataFusion name of the offset form.
OFFSET_VARIANTS: Final[dict[tuple[str, int], str]] = {
    ("tumble", 3): "tumble_offset",
    ("tumble_end", 3): "tumble_end_offset",
    ("hop", 4): "hop_offset",
    ("hop_end", 4): "hop_end_offset",
}

_NS_PER_DAY: Final = 86_400_000_000_000


class WindowArgumentError(ValueError):
    """Raised inside a UDF; DataFusion reports its text (``[invalid_window_argument] ...``)."""


def _ts_us(ts: pa.Array) -> pa.Array:
    """Timestamp(µs, UTC) array as int64 epoch microseconds (nulls kept)."""
    return ts.cast(pa.int64())


def _interval_us(values: pa.Array, function: str, argument: str, *, length: bool) -> pa.Array:
    """Interval array as int64 microseconds after the window-argument checks.

    Distinct values are checked and converted in Python (usually one literal per batch);
    rows are mapped back with a vectorized `take`.
    """
    encoded = values.dictionary_encode()
    micros: list[int] = []
    for item in encoded.dictionary.to_pylist():
        months, days, nanos = item.months, item.days, item.nanoseconds
        if months != 0:
            raise WindowArgumentError(engine_message(function, argument, NOT_FIXED_LENGTH))
        total_ns = days * _NS_PER_DAY + nanos
        if total_ns % 1_000_000 != 0:
            raise WindowArgumentError(engine_message(function, argument, NOT_WHOLE_MS))
        if length and total_ns <= 0:
            raise WindowArgumentError(engine_message(function, argument, NOT_POSITIVE))
        micros.append(total_ns // 1000)
    return pc.take(pa.array(micros, pa.int64()), encoded.indices)


def _floor_mod(a: pa.Array, b: pa.Array) -> pa.Array:
    """`a mod b` rounded toward minus infinity (pyarrow's `modulo` is Python's `%`)."""
    return pc.modulo(a, b)


def _any(mask: pa.Array) -> bool:
    return bool(pc.any(mask).as_py())


def _tumble_start(ts: pa.Array, interval: pa.Array, offset: pa.Array | None, fn: str) -> pa.Array:
    i = _interval_us(interval, fn, "interval", length=True)
    t = _ts_us(ts)
    shifted = t
    if offset is not None:
        shifted = pc.subtract_checked(t, _interval_us(offset, fn, "offset", length=False))
    start = pc.subtract_checked(t, _floor_mod(shifted, i))
    return pc.add_checked(start, i) if fn == "tumble_end" else start


def _hop_start(
    ts: pa.Array, slide: pa.Array, size: pa.Array, offset: pa.Array | None, fn: str
) -> pa.Array:
    sl = _interval_us(slide, fn, "slide", length=True)
    sz = _interval_us(size, fn, "size", length=True)
    o = None if offset is None else _interval_us(offset, fn, "offset", length=False)
    if _any(pc.greater(sl, sz)):
        raise WindowArgumentError(engine_message(fn, "slide", SLIDE_LARGER_THAN_SIZE))
    adj = pc.add_checked(pc.subtract_checked(_ts_us(ts), sz), sl)
    if o is not None:
        adj = pc.subtract_checked(adj, o)
    start = pc.subtract_checked(adj, _floor_mod(adj, sl))
    if o is not None:
        start = pc.add_checked(start, o)
    return pc.add_checked(start, sz) if fn == "hop_end" else start


def _cumulate_start(ts: pa.Array, step: pa.Array, size: pa.Array, fn: str) -> pa.Array:
    st = _interval_us(step, fn, "step", length=True)
    sz = _interval_us(size, fn, "size", length=True)
    if _any(pc.greater(st, sz)):
        raise WindowArgumentError(engine_message(fn, "step", STEP_LARGER_THAN_SIZE))
    if _any(pc.not_equal(_floor_mod(sz, st), 0)):
        raise WindowArgumentError(engine_message(fn, "size", SIZE_NOT_MULTIPLE_OF_STEP))
    t = _ts_us(ts)
    start = pc.subtract_checked(t, _floor_mod(t, sz))
    if fn == "cumulate_end":
        start = pc.add_checked(start, sz)
    # the value does not depend on step, so a NULL step must still give NULL
    return _null_where_null(start, st)


def _null_where_null(values: pa.Array, other: pa.Array) -> pa.Array:
    return pc.if_else(pc.is_valid(other), values, pa.scalar(None, pa.int64()))


def _session(ts: pa.Array, gap: pa.Array) -> pa.Array:
    g = _interval_us(gap, "session", "gap", length=True)
    return _null_where_null(_ts_us(ts), g)


def _functions() -> list[tuple[str, Callable[..., pa.Array], int]]:
    """(DataFusion name, vectorized body returning int64 µs, number of interval arguments)."""
    return [
        ("tumble", lambda t, i: _tumble_start(t, i, None, "tumble"), 1),
        ("tumble_end", lambda t, i: _tumble_start(t, i, None, "tumble_end"), 1),
        ("tumble_offset", lambda t, i, o: _tumble_start(t, i, o, "tumble"), 2),
        ("tumble_end_offset", lambda t, i, o: _tumble_start(t, i, o, "tumble_end"), 2),
        ("hop", lambda t, sl, sz: _hop_start(t, sl, sz, None, "hop"), 2),
        ("hop_end", lambda t, sl, sz: _hop_start(t, sl, sz, None, "hop_end"), 2),
        ("hop_offset", lambda t, sl, sz, o: _hop_start(t, sl, sz, o, "hop"), 3),
        ("hop_end_offset", lambda t, sl, sz, o: _hop_start(t, sl, sz, o, "hop_end"), 3),
        ("session", _session, 1),
        ("cumulate", lambda t, st, sz: _cumulate_start(t, st, sz, "cumulate"), 2),
        ("cumulate_end", lambda t, st, sz: _cumulate_start(t, st, sz, "cumulate_end"), 2),
    ]


def register_datafusion(session_context: Any) -> None:
    """Register the window UDFs on a ``datafusion.SessionContext`` (replaces same-named UDFs)."""
    from datafusion import udf

    for name, body, interval_args in _functions():
        session_context.register_udf(
            udf(
                _as_timestamps(body),
                [TS_TYPE] + [INTERVAL_TYPE] * interval_args,
                RESULT_TYPE,
                "immutable",
                name,
            )
        )


def _as_timestamps(body: Callable[..., pa.Array]) -> Callable[..., pa.Array]:
    def run(*args: pa.Array) -> pa.Array:
        return body(*args).cast(RESULT_TYPE)

    return run


def rewrite_for_datafusion(expression: exp.Expression) -> exp.Expression:
    """Rename offset-form calls (``tumble(ts, i, o)``, ``hop(ts, sl, sz, o)``...) in a sqlglot
    tree to the names registered on DataFusion; returns a new tree."""

    def rename(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Anonymous):
            key = (str(node.this).lower(), len(node.expressions))
            if key in OFFSET_VARIANTS:
                return exp.Anonymous(
                    this=OFFSET_VARIANTS[key], expressions=[e.copy() for e in node.expressions]
                )
        return node

    return expression.copy().transform(rename)
