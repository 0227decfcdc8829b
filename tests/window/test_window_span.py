"""A trailing frame of calendar time (DATUS 1.15 `window.frame.span`, issue 22: MetricFlow's
cumulative `window: 2 month` on every day): the bucket `t` sums the buckets that start after
`t - span` and no later than `t`, whatever the number of buckets in between. Expected values
from plain Python over the hand-written rows (gaps, a NULL amount, two sales on one day), never
from dosi. Also: the scan widens by the span under a time_range start, the payload rules, and
the engines without INTERVAL frames refuse before any SQL."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from enginekit import dataset, field, make_db, metric, model_doc, result_rows, to_yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dosi.engine import Engine
from dosi.errors import ModelError, OsiError

D = dt.date
#: (sale_id, day, region, amount): gaps of weeks, a NULL amount, two sales on 2024-03-31
SALES: tuple[tuple[int, dt.date, str, Decimal | None], ...] = (
    (1, D(2024, 1, 5), "east", Decimal(10)),
    (2, D(2024, 1, 31), "west", Decimal(5)),
    (3, D(2024, 2, 1), "east", Decimal(7)),
    (4, D(2024, 2, 29), "east", None),
    (5, D(2024, 3, 31), "west", Decimal(3)),
    (6, D(2024, 3, 31), "east", Decimal(2)),
    (7, D(2024, 4, 30), "east", Decimal(1)),
)


def _w(window: dict[str, Any]) -> dict[str, Any]:
    return {"v": "1.15", "window": window}


METRICS = [
    metric("revenue", "SUM(sales.amount)"),
    metric(
        "rev_2m", "SUM(sales.amount)", _w({"type": "rolling", "function": "sum", "span": "2 month"})
    ),
    metric(
        "rev_3d",
        "SUM(sales.amount)",
        _w({"frame": {"function": "sum", "span": {"count": 3, "granularity": "day"}}}),
    ),
    metric(
        "max_2w", "MAX(sales.amount)", _w({"type": "rolling", "function": "max", "span": "2 weeks"})
    ),
    metric(
        "rev_3rows", "SUM(sales.amount)", _w({"type": "rolling", "function": "sum", "periods": 3})
    ),
]


def _model(metrics: list[dict[str, Any]]) -> str:
    sales = dataset(
        "sales",
        [
            field("sale_id", datatype="Integer"),
            field("sale_date", datatype="Date", is_time=True),
            field("region", datatype="String"),
            field("amount", datatype="Decimal"),
        ],
        primary_key=["sale_id"],
    )
    return to_yaml(model_doc([sales], metrics=metrics))


def _statements(rows: tuple[tuple[int, dt.date, str, Decimal | None], ...]) -> list[str]:
    out = [
        "CREATE TABLE sales (sale_id INTEGER, sale_date DATE, region VARCHAR, amount DECIMAL(10,2))"
    ]
    if rows:
        values = ", ".join(
            f"({i}, DATE '{d.isoformat()}', '{r}', {'NULL' if a is None else a})"
            for i, d, r, a in rows
        )
        out.append(f"INSERT INTO sales VALUES {values}")
    return out


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_db(tmp_path_factory.mktemp("span") / "s.duckdb", _statements(SALES))


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    eng = Engine(model_text=_model(METRICS))
    yield eng
    eng.close()


# -- the reference: plain Python over SALES --------------------------------------------------
def _minus_months(d: dt.date, n: int) -> dt.date:
    """`d` n calendar months back, the day clamped to the month's end (Feb 29 -> Feb 28)."""
    y, m = divmod(d.year * 12 + d.month - 1 - n, 12)
    m += 1
    last = (D(y + (m == 12), m % 12 + 1, 1) - dt.timedelta(days=1)).day
    return D(y, m, min(d.day, last))


def _framed(
    t: dt.date,
    start: dt.date,
    rows: tuple[tuple[int, dt.date, str, Decimal | None], ...] = SALES,
    fn: Any = sum,
    region: str | None = None,
) -> Any:
    """`fn` over the non-NULL amounts of the days in (start, t]; None when there are none."""
    vals = [a for _, d, r, a in rows if start < d <= t and a is not None and region in (None, r)]
    return fn(vals) if vals else None


def _days_with_data() -> list[dt.date]:
    return sorted({d for _, d, _, _ in SALES})


def test_a_two_month_span_sums_calendar_months_not_buckets(engine: Engine, db: Path) -> None:
    """issue 22 (MetricFlow window: 2 month): on 2024-03-31 the frame starts on 2024-02-01
    (2024-01-31 is out), on 2024-04-30 on 2024-03-01 (February 29 is out); the ROWS frame of 3
    buckets reads the three previous days that have data, wherever they are."""
    q = {"metrics": ["rev_2m", "rev_3d", "max_2w", "rev_3rows"], "group_by": ["metric_time:day"]}
    got = result_rows(engine.execute(q, db_path=db))
    days = _days_with_data()
    want = []
    for i, t in enumerate(days):
        rows3 = [
            sum((a for _, d, _, a in SALES if d == x and a is not None), Decimal(0))
            for x in days[max(0, i - 2) : i + 1]
        ]
        nonnull = [
            x
            for x in days[max(0, i - 2) : i + 1]
            if any(d == x and a is not None for _, d, _, a in SALES)
        ]
        want.append(
            (
                t.isoformat(),
                _framed(t, _minus_months(t, 2)),
                _framed(t, t - dt.timedelta(days=3)),
                _framed(t, t - dt.timedelta(days=14), fn=max),
                sum(rows3) if nonnull else None,
            )
        )
    assert got == want
    by_day = {r[0]: r for r in got}
    assert by_day["2024-03-31"][1] == Decimal(12)  # 7 (Feb 1) + NULL + 5, not Jan 31's 5
    assert by_day["2024-04-30"][1] == Decimal(6)  # 3 + 2 + 1: Feb 29 is a span back


def test_a_span_partitions_by_the_other_dimensions(engine: Engine, db: Path) -> None:
    """Per region, the span reads that region's days only."""
    q = {"metrics": ["rev_2m"], "group_by": ["metric_time:day", "sales.region"]}
    got = result_rows(engine.execute(q, db_path=db))
    pairs = sorted({(d, r) for _, d, r, _ in SALES})
    want = [(d.isoformat(), r, _framed(d, _minus_months(d, 2), region=r)) for d, r in pairs]
    assert got == want


def test_a_time_range_start_widens_the_scan_by_the_span(engine: Engine, db: Path) -> None:
    """From 2024-03-15 on, March 31's value still counts February 1 (read by the widened scan,
    trimmed from the result); the scan's lower bound is two months before the range start."""
    q = {
        "metrics": ["rev_2m"],
        "group_by": ["metric_time:day"],
        "time_range": {"start": "2024-03-15", "end": "2024-05-01"},
    }
    got = result_rows(engine.execute(q, db_path=db))
    want = [
        (t.isoformat(), _framed(t, _minus_months(t, 2)))
        for t in _days_with_data()
        if t >= D(2024, 3, 15)
    ]
    assert got == want == [("2024-03-31", Decimal(12)), ("2024-04-30", Decimal(6))]
    sql = engine.compile(q)["sql"]
    assert "2024-01-15" in sql


def test_a_dense_day_series_is_read_on_every_day(engine: Engine, db: Path) -> None:
    """densify time: every day of the range has the span's value (NULL where no sale lies in
    the trailing 3 days)."""
    q = {
        "metrics": ["rev_3d"],
        "group_by": ["metric_time:day"],
        "time_range": {"start": "2024-03-29", "end": "2024-04-05"},
        "densify": "time",
    }
    got = result_rows(engine.execute(q, db_path=db))
    days = [D(2024, 3, 29) + dt.timedelta(days=i) for i in range(7)]
    assert got == [(t.isoformat(), _framed(t, t - dt.timedelta(days=3))) for t in days]
    assert [r[1] for r in got] == [None, None, Decimal(5), Decimal(5), Decimal(5), None, None]


def test_a_covered_series_runs_a_span_past_the_last_sale(engine: Engine, db: Path) -> None:
    """densify covered: every day on which the 3-day span has a value, the empty days after
    2024-04-30 that still reach its sale included (MetricFlow's cumulative window on its
    spine)."""
    q = {"metrics": ["rev_3d"], "group_by": ["metric_time:day"], "densify": "covered"}
    got = result_rows(engine.execute(q, db_path=db))
    first, last = min(d for _, d, _, _ in SALES), max(d for _, d, _, _ in SALES)
    days = [first + dt.timedelta(days=i) for i in range((last - first).days + 10)]
    want = [
        (t.isoformat(), v) for t in days if (v := _framed(t, t - dt.timedelta(days=3))) is not None
    ]
    assert got == want
    assert got[-1] == ("2024-05-02", Decimal(1))


def test_a_covered_series_crosses_the_values_of_the_widened_scan(engine: Engine, db: Path) -> None:
    """west sells on 2024-01-31 and 2024-03-31 only: from 2024-03-01 to 2024-03-30 its 2-month
    span still holds January 31's 5, so it has a row on each of those days although it has no
    sale in the range (the values crossed are those of the widened scan)."""
    q = {
        "metrics": ["rev_2m"],
        "group_by": ["metric_time:day", "sales.region"],
        "time_range": {"start": "2024-03-01", "end": "2024-03-31"},
        "densify": "covered",
    }
    got = result_rows(engine.execute(q, db_path=db))
    days = [D(2024, 3, 1) + dt.timedelta(days=i) for i in range(30)]
    want = sorted(
        (t.isoformat(), r, v)
        for t in days
        for r in ("east", "west")
        if (v := _framed(t, _minus_months(t, 2), region=r)) is not None
    )
    assert sorted(got) == want
    west = [row for row in got if row[1] == "west"]
    assert len(west) == 30 and west[0] == ("2024-03-01", "west", Decimal(5))


def test_explain_names_the_span(engine: Engine) -> None:
    plan = engine.explain({"metrics": ["rev_2m"], "group_by": ["metric_time:day"]})
    assert "span 2 month" in plan


@pytest.mark.parametrize(
    "window",
    [
        {"frame": {"function": "sum", "span": "2 month", "preceding": 2}},
        {"frame": {"function": "sum", "span": "2 month", "units": "range"}},
        {"type": "rolling", "function": "sum", "span": "2 month", "periods": 3},
        {"frame": {"function": "sum", "span": "two months"}},
        {"frame": {"function": "sum", "span": "2 fortnight"}},
        {"frame": {"function": "sum", "span": {"count": 0, "granularity": "day"}}},
        {"frame": {"function": "sum", "span": {"count": 2}}},
        {"frame": {"function": "sum", "span": "2 month", "order": {"by": "value"}}},
    ],
)
def test_span_payload_rules(window: dict[str, Any]) -> None:
    """A span replaces preceding / periods and the unit keys; its text is `<count> <unit>`."""
    with pytest.raises(ModelError) as err:
        Engine(model_text=_model([metric("m", "SUM(sales.amount)", _w(window))]))
    assert "span" in str(err.value) or "invalid_datus_extension" in str(err.value)


def test_span_is_newer_than_1_14() -> None:
    """span is a 1.15 shape: a payload declaring 1.14 gets the newer-key warning (and the
    shape is honoured, ENV-V-08)."""
    payload = {"v": "1.14", "window": {"type": "rolling", "function": "sum", "span": "2 day"}}
    eng = Engine(model_text=_model([metric("m", "SUM(sales.amount)", payload)]))
    try:
        codes = {w["code"] for w in eng.warnings}
    finally:
        eng.close()
    assert "datus_ext_key_newer_than_declared" in codes


@pytest.mark.parametrize("dialect", ["sqlite", "mariadb", "clickhouse"])
def test_engines_without_interval_frames_refuse_before_sql(engine: Engine, dialect: str) -> None:
    with pytest.raises(OsiError) as err:
        engine.compile({"metrics": ["rev_2m"], "group_by": ["metric_time:day"]}, dialect=dialect)
    assert err.value.code == "dialect_unsupported_window_function"
    assert "INTERVAL" in err.value.message


@pytest.mark.parametrize("dialect", ["postgres", "duckdb"])
def test_interval_frames_compile_for_duckdb_and_postgres(engine: Engine, dialect: str) -> None:
    sql = engine.compile({"metrics": ["rev_2m"], "group_by": ["metric_time:day"]}, dialect=dialect)
    assert "RANGE BETWEEN" in sql["sql"]


# -- property: a dense span sum is the sum of the days it spans ------------------------------
_DAY = st.integers(min_value=0, max_value=59).map(lambda n: D(2024, 1, 1) + dt.timedelta(days=n))


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    days=st.lists(st.tuples(_DAY, st.integers(1, 9)), min_size=1, max_size=12),
    span=st.integers(1, 10),
)
def test_property_dense_span_sum_equals_the_days_it_spans(
    tmp_path_factory: pytest.TempPathFactory, days: list[tuple[dt.date, int]], span: int
) -> None:
    """Densified by day, a span of n days equals, on every day, the sum of the amounts of the
    n days ending there, and equals the rolling frame of n buckets over the dense series."""
    rows = tuple((i, d, "east", Decimal(a)) for i, (d, a) in enumerate(days))
    db = make_db(tmp_path_factory.mktemp("span_prop") / "p.duckdb", _statements(rows))
    ms = [
        metric(
            "s",
            "SUM(sales.amount)",
            _w({"type": "rolling", "function": "sum", "span": f"{span} day"}),
        ),
        metric(
            "r", "SUM(sales.amount)", _w({"type": "rolling", "function": "sum", "periods": span})
        ),
    ]
    eng = Engine(model_text=_model(ms))
    try:
        q = {
            "metrics": ["s", "r"],
            "group_by": ["metric_time:day"],
            "time_range": {"start": "2024-01-01", "end": "2024-03-01"},
            "densify": "time",
        }
        got = result_rows(eng.execute(q, db_path=db))
    finally:
        eng.close()
    assert len(got) == 60
    for t_s, s, r in got:
        t = D.fromisoformat(t_s)
        assert s == _framed(t, t - dt.timedelta(days=span), rows)
        assert s == r
