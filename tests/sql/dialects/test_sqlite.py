"""SQLite lowerings (dosi.sql.dialects.sqlite), executed on the standard library's sqlite3 and
compared with Python's own calendar arithmetic: buckets for every grain (ISO weeks start on
Monday), shifts, bounds, and the epoch conversions streaming windows use."""

from __future__ import annotations

import datetime as dt
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlglot import exp

from dosi.sql.dialects import get_dialect

SQLITE = get_dialect("sqlite")
_GRAINS = ("day", "week", "month", "quarter", "year")


def _run(e: exp.Expression) -> object:
    con = sqlite3.connect(":memory:")
    try:
        return con.execute(f"SELECT {e.sql('sqlite')}").fetchone()[0]
    finally:
        con.close()


def _bucket(d: dt.datetime, grain: str) -> dt.datetime:
    day = dt.datetime(d.year, d.month, d.day)
    if grain == "day":
        return day
    if grain == "week":
        return day - dt.timedelta(days=day.weekday())
    if grain == "month":
        return day.replace(day=1)
    if grain == "quarter":
        return day.replace(day=1, month=(d.month - 1) // 3 * 3 + 1)
    return day.replace(day=1, month=1)


_MOMENTS = st.datetimes(min_value=dt.datetime(1901, 1, 1), max_value=dt.datetime(2099, 12, 31))


@settings(max_examples=60, deadline=None)
@given(moment=_MOMENTS, grain=st.sampled_from(_GRAINS), as_date=st.booleans())
def test_buckets_match_the_calendar(moment: dt.datetime, grain: str, as_date: bool) -> None:
    moment = moment.replace(microsecond=0)
    text = moment.date().isoformat() if as_date else moment.isoformat(sep=" ")
    got = _run(SQLITE.bucket(exp.Literal.string(text), grain))
    want = _bucket(moment, grain)
    assert got == want.isoformat(sep=" ")


@pytest.mark.parametrize(
    ("start", "count", "grain", "want"),
    [
        ("2024-01-01 00:00:00", -1, "month", "2023-12-01 00:00:00"),
        ("2024-03-01 00:00:00", 1, "quarter", "2024-06-01 00:00:00"),
        ("2024-02-29 00:00:00", -1, "year", "2023-03-01 00:00:00"),
        ("2024-03-04 00:00:00", -1, "week", "2024-02-26 00:00:00"),
        ("2024-03-01 00:00:00", -1, "day", "2024-02-29 00:00:00"),
    ],
)
def test_shifts(start: str, count: int, grain: str, want: str) -> None:
    assert _run(SQLITE.shift(exp.Literal.string(start), count, grain)) == want


def test_bounds_are_iso_text_that_compares_like_dates() -> None:
    day = SQLITE.time_literal(dt.date(2024, 1, 1), "Date")
    ts = SQLITE.time_literal(dt.date(2024, 1, 1), "DateTime")
    assert _run(day) == "2024-01-01" and _run(ts) == "2024-01-01 00:00:00"
    aligned = SQLITE.trunc_date(exp.Literal.string("2024-05-17"), "quarter")
    assert _run(aligned) == "2024-04-01"


@settings(max_examples=40, deadline=None)
@given(moment=_MOMENTS, millis=st.integers(0, 999))
def test_epoch_round_trip(moment: dt.datetime, millis: int) -> None:
    moment = moment.replace(microsecond=millis * 1000)
    text = moment.isoformat(sep=" ", timespec="milliseconds")
    want = round((moment - dt.datetime(1970, 1, 1)).total_seconds() * 1000) * 1000
    units = SQLITE.epoch_us(exp.Literal.string(text))
    assert _run(units) == want
    back = _run(SQLITE.from_epoch(exp.Literal.number(want), 1000))
    assert back == text


def test_statistical_window_functions_are_gated() -> None:
    for fn in ("stddev_pop", "var_samp", "corr", "covar_pop"):
        assert not SQLITE.supports_window_function(fn)
    for fn in ("sum", "avg", "cume_dist", "ntile", "nth_value"):
        assert SQLITE.supports_window_function(fn)


@pytest.mark.parametrize(
    ("stored", "datatype", "bound", "inside"),
    [
        ("2025-11-28T12:00:00", "DateTime", dt.datetime(2025, 11, 28, 12), True),
        ("2025-11-28T11:59:59.500", "DateTime", dt.datetime(2025, 11, 28, 12), False),
        ("2024-01-01 00:00:00", "Date", dt.date(2024, 1, 1), True),
        ("2023-12-31", "Date", dt.date(2024, 1, 1), False),
    ],
)
def test_range_filters_accept_every_iso_spelling(
    stored: str, datatype: str, bound: dt.date, inside: bool
) -> None:
    """A time_range start (`>=` bound) holds whether the text uses 'T' or ' ', fractions, or a
    midnight time on a DATE column."""
    operand = SQLITE.time_operand(exp.Literal.string(stored), datatype)
    test = exp.GTE(this=operand, expression=SQLITE.time_literal(bound, datatype))
    assert bool(_run(test)) is inside
