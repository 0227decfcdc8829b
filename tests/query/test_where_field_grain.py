"""A time field at a grain in where_sql (issue 22 item 6 in filters, issue 21's open
`dataset.field__grain` item): `orders.d:month >= '2024-02-01'` compares the field's month
bucket, a calendar-table grain (`customers.signup:sprint`) the day's calendar row. Expected
rows are plain Python over grainkit's data (gaps, a NULL date, a day the calendar lacks)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
from grainkit import CUSTOMERS, ORDERS, build, calendar_days, model, sprint

import dosi


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dosi.Engine]:
    db = build(tmp_path_factory.mktemp("grainwhere") / "g.duckdb")
    eng = dosi.Engine(model_text=model(), connections={"duck": {"type": "duckdb", "uri": str(db)}})
    yield eng
    eng.close()


def _revenue(keep: object) -> int | None:
    vals = [a for _, c, d, a in ORDERS if a is not None and keep(c, d)]  # type: ignore[operator]
    return sum(vals) if vals else None


def _one(eng: dosi.Engine, where: str) -> object:
    res = eng.execute({"metrics": ["revenue"], "where_sql": where})
    return res["rows"][0]["revenue"]


def _sprint_of(d: dt.date | None) -> dt.date | None:
    return sprint(d) if d is not None and d in set(calendar_days()) else None


def test_field_at_a_standard_grain(engine: dosi.Engine) -> None:
    """`orders.d:month >= '2024-01-15'` keeps February on (January's bucket starts on the 1st)."""
    want = _revenue(lambda c, d: d is not None and d.replace(day=1) >= dt.date(2024, 1, 15))
    assert _one(engine, "orders.d:month >= '2024-01-15'") == want == 28
    assert _one(engine, "orders.d__month = '2024-01-01'") == _revenue(
        lambda c, d: d is not None and d.replace(day=1) == dt.date(2024, 1, 1)
    )


def test_field_at_a_calendar_table_grain(engine: dosi.Engine) -> None:
    """The calendar row of each order's day decides; a day the table lacks has no bucket."""
    cut = dt.date(2024, 1, 12)
    want = _revenue(lambda c, d: (s := _sprint_of(d)) is not None and s >= cut)
    assert _one(engine, "orders.d:sprint >= '2024-01-12'") == want


def test_joined_field_at_a_calendar_grain_grouped(engine: dosi.Engine) -> None:
    """A joined dimension's grain in the filter and the group-by (MetricFlow's
    `TimeDimension('listing__ds', 'alien_day')`)."""
    signup = dict(CUSTOMERS)
    cut = dt.date(2024, 1, 1)
    res = engine.execute(
        {
            "metrics": ["revenue"],
            "group_by": ["customers.signup:sprint"],
            "where_sql": "customers.signup:sprint >= '2024-01-01'",
        }
    )
    got = {r["signup__sprint"]: r["revenue"] for r in res["rows"]}
    want: dict[dt.date, int] = {}
    for _, c, _d, a in ORDERS:
        s = sprint(signup[c])
        if s >= cut and a is not None:
            want[s] = want.get(s, 0) + a
    assert {dt.date.fromisoformat(str(k)[:10]): v for k, v in got.items()} == want
    assert want  # the cut keeps some buckets


def test_grain_errors(engine: dosi.Engine) -> None:
    """A grain on a non-time field, a date part, an unknown grain: structured errors."""
    cases = {
        "orders.amount:month >= '2024-01-01'": "grain_on_non_time_dimension",
        "orders.d:day_of_week = 1": "unsupported_filter",
        "orders.d:sprnt >= '2024-01-01'": "unknown_grain",
    }
    for where, code in cases.items():
        with pytest.raises(dosi.QueryError) as info:
            engine.execute({"metrics": ["revenue"], "where_sql": where})
        assert info.value.code == code, where


def test_literal_with_colon_is_left_alone(engine: dosi.Engine, tmp_path: Path) -> None:
    """Only a name directly followed by `:grain` is a grained spelling: a string literal with
    the same characters stays a string."""
    res = engine.execute(
        {"metrics": ["order_count"], "where_sql": "CAST(orders.id AS VARCHAR) <> 'orders.d:month'"}
    )
    assert res["rows"][0]["order_count"] == len(ORDERS)


def test_dimension_only_query_by_a_calendar_table_grain(engine: dosi.Engine) -> None:
    """A query without metrics lists the calendar-table buckets of a time field, filtered by
    the same grain (issue 22 item 6 in dimension-only queries and detail rows)."""
    res = engine.execute(
        {
            "metrics": [],
            "group_by": ["customers.signup:sprint"],
            "where_sql": "customers.signup:sprint >= '2024-01-01'",
        }
    )
    got = {dt.date.fromisoformat(str(r["signup__sprint"])[:10]) for r in res["rows"]}
    want = {sprint(d) for _, d in CUSTOMERS if sprint(d) >= dt.date(2024, 1, 1)}
    assert got == want and len(want) == 2
