"""The seven window functions as DuckDB macros (window-udf.md), registered per connection.

Each function is one ``CREATE OR REPLACE TEMP MACRO`` with typed overloads, so DuckDB evaluates it
vectorized and a call with the wrong arity or argument types fails at bind time with
``Macro tumble() does not support the supplied arguments`` and the list of candidate signatures
(argument names included). Temp macros live in the connection's temp catalog: register on every
connection (cursors of a connection are separate connections in DuckDB).

Accepted `ts` types: TIMESTAMP (and TIMESTAMP_S/_MS, which DuckDB casts to it exactly),
TIMESTAMP_NS (floored to microseconds), TIMESTAMPTZ (its UTC instant), DATE (midnight UTC) and
BIGINT/INTEGER/SMALLINT (epoch milliseconds). Window lengths and offsets are INTERVALs. Results are
TIMESTAMP (microseconds, no time zone; UDF-GEN-03), in UTC for TIMESTAMPTZ input.

The arithmetic runs on epoch microseconds with every length a whole number of milliseconds;
because ``floor(floor(x) / n) == floor(x / n)`` for a positive integer ``n``, this gives exactly
the boundaries of the millisecond formulas in `dosi.udf.reference` (UDF-GEN-02), pre-1970 too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from dosi.udf.validation import (
    NOT_FIXED_LENGTH,
    NOT_POSITIVE,
    NOT_WHOLE_MS,
    SIZE_NOT_MULTIPLE_OF_STEP,
    SLIDE_LARGER_THAN_SIZE,
    STEP_LARGER_THAN_SIZE,
    engine_message,
)

__all__ = ["macro_statements", "register_duckdb"]

#: How each accepted `ts` type becomes epoch microseconds (`{ts}` is the parameter).
_TS_TO_US: Final[dict[str, str]] = {
    "TIMESTAMP": "epoch_us({ts})",
    "TIMESTAMPTZ": "epoch_us({ts})",
    # DuckDB's own TIMESTAMP_NS -> TIMESTAMP cast rounds; floor the nanoseconds instead
    "TIMESTAMP_NS": "((epoch_ns({ts}) - (((epoch_ns({ts}) % 1000) + 1000) % 1000)) // 1000)",
    "DATE": "(epoch_ms({ts}) * 1000)",
    "BIGINT": "(CAST({ts} AS BIGINT) * 1000)",
}


def _q(name: str) -> str:
    return f'"{name}"'


def _sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _us(param: str) -> str:
    """Interval parameter as microseconds (valid once it passed the fixed-length check)."""
    return f"epoch_us({_q(param)})"


def _floor_mod(a: str, b: str) -> str:
    """`a mod b` rounded toward minus infinity for b > 0 (DuckDB's % truncates toward zero)."""
    return f"((({a}) % ({b})) + ({b})) % ({b})"


def _interval_checks(function: str, param: str, *, length: bool) -> list[tuple[str, str]]:
    p = _q(param)
    checks = [
        (
            f"datepart('year', {p}) <> 0 OR datepart('month', {p}) <> 0",
            engine_message(function, param, NOT_FIXED_LENGTH),
        ),
        (f"{_us(param)} % 1000 <> 0", engine_message(function, param, NOT_WHOLE_MS)),
    ]
    if length:
        checks.append((f"{_us(param)} <= 0", engine_message(function, param, NOT_POSITIVE)))
    return checks


def _case(checks: Sequence[tuple[str, str]], result: str, *, null_if: str | None = None) -> str:
    whens = [f"WHEN {cond} THEN error({_sql_text(msg)})" for cond, msg in checks]
    if null_if is not None:
        whens.append(f"WHEN {null_if} THEN NULL")
    return "CASE " + " ".join(whens) + f" ELSE {result} END"


def _tumble(function: str, ts_us: str, with_offset: bool) -> str:
    checks = _interval_checks(function, "interval", length=True)
    offset = "0"
    if with_offset:
        checks += _interval_checks(function, "offset", length=False)
        offset = _us("offset")
    i = _us("interval")
    start = f"({ts_us} - {_floor_mod(f'{ts_us} - {offset}', i)})"
    result = start if function == "tumble" else f"({start} + {i})"
    return _case(checks, f"make_timestamp({result})")


def _hop(function: str, ts_us: str, with_offset: bool) -> str:
    checks = _interval_checks(function, "slide", length=True)
    checks += _interval_checks(function, "size", length=True)
    offset = "0"
    if with_offset:
        checks += _interval_checks(function, "offset", length=False)
        offset = _us("offset")
    slide, size = _us("slide"), _us("size")
    checks.append((f"{slide} > {size}", engine_message(function, "slide", SLIDE_LARGER_THAN_SIZE)))
    adj = f"({ts_us} - {size} + {slide} - {offset})"
    start = f"({adj} - {_floor_mod(adj, slide)} + {offset})"
    result = start if function == "hop" else f"({start} + {size})"
    return _case(checks, f"make_timestamp({result})")


def _cumulate(function: str, ts_us: str) -> str:
    checks = _interval_checks(function, "step", length=True)
    checks += _interval_checks(function, "size", length=True)
    step, size = _us("step"), _us("size")
    checks.append((f"{step} > {size}", engine_message(function, "step", STEP_LARGER_THAN_SIZE)))
    checks.append(
        (f"{size} % {step} <> 0", engine_message(function, "size", SIZE_NOT_MULTIPLE_OF_STEP))
    )
    start = f"({ts_us} - {_floor_mod(ts_us, size)})"
    result = start if function == "cumulate" else f"({start} + {size})"
    # the value does not depend on step, so a NULL step needs its own NULL branch
    return _case(checks, f"make_timestamp({result})", null_if=f"{_q('step')} IS NULL")


def _session(ts_us: str) -> str:
    checks = _interval_checks("session", "gap", length=True)
    return _case(checks, f"make_timestamp({ts_us})", null_if=f"{_q('gap')} IS NULL")


def _overload(params: Sequence[tuple[str, str]], body: str) -> str:
    return "(" + ", ".join(f"{_q(n)} {t}" for n, t in params) + f") AS {body}"


def _macro(name: str, overloads: Sequence[str]) -> str:
    return f"CREATE OR REPLACE TEMP MACRO {name}\n  " + ",\n  ".join(overloads)


def macro_statements() -> list[str]:
    """The ``CREATE OR REPLACE TEMP MACRO`` statements, one per function (static SQL)."""
    statements: list[str] = []
    for name in ("tumble", "tumble_end"):
        overloads = []
        for ts_type, template in _TS_TO_US.items():
            ts_us = template.format(ts=_q("ts"))
            base = [("ts", ts_type), ("interval", "INTERVAL")]
            overloads.append(_overload(base, _tumble(name, ts_us, False)))
            overloads.append(_overload([*base, ("offset", "INTERVAL")], _tumble(name, ts_us, True)))
        statements.append(_macro(name, overloads))
    for name in ("hop", "hop_end"):
        overloads = []
        for ts_type, template in _TS_TO_US.items():
            ts_us = template.format(ts=_q("ts"))
            base = [("ts", ts_type), ("slide", "INTERVAL"), ("size", "INTERVAL")]
            overloads.append(_overload(base, _hop(name, ts_us, False)))
            overloads.append(_overload([*base, ("offset", "INTERVAL")], _hop(name, ts_us, True)))
        statements.append(_macro(name, overloads))
    session = [
        _overload([("ts", t), ("gap", "INTERVAL")], _session(tpl.format(ts=_q("ts"))))
        for t, tpl in _TS_TO_US.items()
    ]
    statements.append(_macro("session", session))
    for name in ("cumulate", "cumulate_end"):
        overloads = [
            _overload(
                [("ts", t), ("step", "INTERVAL"), ("size", "INTERVAL")],
                _cumulate(name, tpl.format(ts=_q("ts"))),
            )
            for t, tpl in _TS_TO_US.items()
        ]
        statements.append(_macro(name, overloads))
    return statements


def register_duckdb(connection: Any) -> None:
    """Create the window macros on `connection` (a ``duckdb.DuckDBPyConnection``); idempotent."""
    for statement in macro_statements():
        connection.execute(statement)
