"""D-WINDOW `period_value` on an offset (DATUS 1.15; the MetricFlow bed's
`offset_finer_than_grain`): a query grain the shift does not land on (5 days back, by month)
is answered per day, each day reading the day 5 days before, and a month reports the sum of
its days' values. A grain the shift does land on stays the shifted-bucket self-join. Expected
values are plain Python over grainkit's orders (gaps, a NULL amount, a NULL date)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest
from enginekit import metric
from grainkit import ORDERS, build, model

import dosi
from dosi.errors import ModelError

SUM_DAYS = {"value": "sum", "grain": "day"}
LAG5 = {"offset": {"count": 5, "granularity": "day"}, "calculation": "value"}
PREV_MONTH = {"offset": {"count": 1, "granularity": "month"}, "calculation": "value"}


def _metrics() -> list[dict[str, Any]]:
    def w(name: str, window: dict[str, Any]) -> dict[str, Any]:
        return metric(name, "SUM(orders.amount)", {"v": "1.15", "window": window})

    return [
        w("rev_lag5", {**LAG5, "period_value": SUM_DAYS}),
        w("rev_prev_month", {**PREV_MONTH, "period_value": SUM_DAYS}),
        w("rev_lag5_plain", LAG5),
        w(
            "rev_mstart_days",
            {"offset": {"period_start": "month"}, "calculation": "value", "period_value": "first"},
        ),
        metric("customers", "COUNT(DISTINCT orders.customer_id)"),
        metric(
            "rev_vs_lag5",
            "SUM(orders.amount) - SUM(orders.amount)",
            {"v": "1.4", "derive": {"type": "compose", "expr": "revenue - rev_lag5"}},
        ),
    ]


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dosi.Engine]:
    db = build(tmp_path_factory.mktemp("offpv") / "o.duckdb")
    eng = dosi.Engine(
        model_text=model(_metrics()), connections={"duck": {"type": "duckdb", "uri": str(db)}}
    )
    yield eng
    eng.close()


def _by_day() -> dict[dt.date, int | None]:
    out: dict[dt.date, int | None] = {}
    for _, _c, d, a in ORDERS:
        if d is None:
            continue
        prev = out.get(d)
        out[d] = a if prev is None else prev + (a or 0)
    return out


def _bucket(d: dt.date, grain: str) -> dt.date:
    if grain == "month":
        return d.replace(day=1)
    return d - dt.timedelta(days=d.weekday())


def _lag_sums(grain: str) -> dict[dt.date, int]:
    """Each day g reads the revenue of g - 5 days; a bucket sums its days' values."""
    out: dict[dt.date, int] = {}
    for d, v in _by_day().items():
        if v is None:
            continue
        g = d + dt.timedelta(days=5)
        b = _bucket(g, grain)
        out[b] = out.get(b, 0) + v
    return out


def _values(res: dict[str, Any], key: str, metric: str) -> dict[dt.date, Any]:
    return {
        dt.date.fromisoformat(str(r[key])[:10]): r[metric]
        for r in res["rows"]
        if r[key] is not None and r[metric] is not None
    }


@pytest.mark.parametrize("grain", ["month", "week"])
def test_lag_summed_over_the_days(engine: dosi.Engine, grain: str) -> None:
    res = engine.execute({"metrics": ["rev_lag5"], "group_by": [f"metric_time:{grain}"]})
    got = _values(res, f"metric_time__{grain}", "rev_lag5")
    assert got == _lag_sums(grain)
    if grain == "month":
        # 31 January's 4 lands in February; February 29 to 4 March (6, 3, 9) in March
        assert got[dt.date(2024, 2, 1)] == 4 + 8 and got[dt.date(2024, 3, 1)] == 6 + 3 + 9


def test_day_grain_is_the_shift_itself(engine: dosi.Engine) -> None:
    res = engine.execute(
        {"metrics": ["rev_lag5", "rev_lag5_plain"], "group_by": ["metric_time:day"]}
    )
    rows = [r for r in res["rows"] if r["metric_time__day"] is not None]
    assert all(r["rev_lag5"] == r["rev_lag5_plain"] for r in rows)
    days = _by_day()
    for r in rows:
        d = dt.date.fromisoformat(str(r["metric_time__day"])[:10])
        assert r["rev_lag5"] == days.get(d - dt.timedelta(days=5))


def test_aligned_grain_keeps_the_shifted_bucket(engine: dosi.Engine) -> None:
    """By month a 1-month offset lands on month buckets: the previous month's revenue, not a
    sum of day values (which would count 29 February for 29-31 March)."""
    res = engine.execute(
        {"metrics": ["revenue", "rev_prev_month"], "group_by": ["metric_time:month"]}
    )
    got = _values(res, "metric_time__month", "rev_prev_month")
    months: dict[dt.date, int] = {}
    for d, v in _by_day().items():
        if v is not None:
            months[d.replace(day=1)] = months.get(d.replace(day=1), 0) + v
    want = {}
    for m, v in months.items():
        nxt = (m.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
        if nxt in months:
            want[nxt] = v
    assert got == want


def test_without_period_value_stays_misaligned(engine: dosi.Engine) -> None:
    with pytest.raises(dosi.QueryError) as info:
        engine.execute({"metrics": ["rev_lag5_plain"], "group_by": ["metric_time:month"]})
    assert info.value.code == "window_offset_misaligned"


def test_composed_with_a_plain_sum(engine: dosi.Engine) -> None:
    """A plain SUM beside it is the sum of its day rows, and a compose over both is computed
    per month after the sampling (MetricFlow aggregates each input to the grain, then
    composes): revenue - revenue five days before."""
    res = engine.execute(
        {"metrics": ["revenue", "rev_lag5", "rev_vs_lag5"], "group_by": ["metric_time:month"]}
    )
    got = {
        dt.date.fromisoformat(str(r["metric_time__month"])[:10]): (
            r["revenue"],
            r["rev_lag5"],
            r["rev_vs_lag5"],
        )
        for r in res["rows"]
        if r["metric_time__month"] is not None
    }
    lag = _lag_sums("month")
    months: dict[dt.date, int] = {}
    for d, v in _by_day().items():
        if v is not None:
            months[d.replace(day=1)] = months.get(d.replace(day=1), 0) + v
    want = {}
    for m in sorted({*months, *lag}):
        cur, prev = months.get(m), lag.get(m)
        want[m] = (cur, prev, None if cur is None or prev is None else cur - prev)
    assert got == want


def test_a_count_distinct_beside_it_is_refused(engine: dosi.Engine) -> None:
    """A count distinct cannot be rebuilt from day rows: queried separately."""
    with pytest.raises(dosi.QueryError) as info:
        engine.execute({"metrics": ["rev_lag5", "customers"], "group_by": ["metric_time:month"]})
    assert info.value.code == "not_implemented"


def test_period_start_first_day_by_week(engine: dosi.Engine) -> None:
    """With period_value first, a period start grouped coarser reads the day value on each
    bucket's first day: a week reads the revenue of the first day of its Monday's month."""
    res = engine.execute({"metrics": ["rev_mstart_days"], "group_by": ["metric_time:week"]})
    got = _values(res, "metric_time__week", "rev_mstart_days")
    days = _by_day()
    # every week returned reads its Monday's month start (weeks without orders too: the day
    # series covers the days a start value reaches)
    assert got and all(v == days.get(w.replace(day=1)) for w, v in got.items())
    weeks = {_bucket(d, "week") for d in days}
    want = {w: days[w.replace(day=1)] for w in weeks if days.get(w.replace(day=1)) is not None}
    assert want.items() <= got.items()
    # the week of 29 January reads 1 January, though it holds 2 February, whose month start
    # has no orders: the first day of the week decides
    assert got[dt.date(2024, 1, 29)] == 15


@pytest.mark.parametrize(
    "window",
    [
        {**LAG5, "period_value": {"value": "median"}},
        {**LAG5, "period_value": {"value": "sum", "grain": "week"}},
    ],
)
def test_bad_payloads(window: dict[str, Any]) -> None:
    text = model([metric("bad", "SUM(orders.amount)", {"v": "1.15", "window": window})])
    with pytest.raises(ModelError) as info:
        dosi.Engine(model_text=text)
    assert "invalid_datus_extension" in {d.code for d in info.value.issues}


def test_sum_is_for_offsets_only() -> None:
    """A running value does not add up over a coarser bucket: `sum` is refused on a frame."""
    window = {"type": "cumulative", "function": "sum", "period_value": "sum"}
    text = model([metric("bad", "SUM(orders.amount)", {"v": "1.15", "window": window})])
    with pytest.raises(ModelError) as info:
        dosi.Engine(model_text=text)
    assert "invalid_datus_extension" in {d.code for d in info.value.issues}
