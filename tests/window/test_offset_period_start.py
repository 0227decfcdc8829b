"""D-WINDOW `offset.period_start` (DATUS 1.15; issue 22, the MetricFlow bed's
`offset_to_grain`): each bucket reads the metric's value on the first bucket of its period
(the revenue of the month's first day), NULL when that bucket has no data (WIN-OFF-06: the
exact calendar key, never the previous row). Expected values are plain Python over grainkit's
orders: gaps, a month whose first day has no order, a NULL amount and a NULL date."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest
from enginekit import metric
from grainkit import ORDERS, build, model

import dosi
from dosi.errors import ModelError

W = {"offset": {"period_start": "month"}, "calculation": "value"}
METRICS = [
    {"name": "rev_mstart", "window": W},
    {"name": "rev_since_mstart", "window": {**W, "calculation": "delta"}},
    {
        "name": "rev_qstart",
        "window": {"offset": {"period_start": "quarter"}, "calculation": "value"},
    },
]


def _metrics() -> list[dict[str, Any]]:
    return [
        metric(m["name"], "SUM(orders.amount)", {"v": "1.15", "window": m["window"]})
        for m in METRICS
    ]


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dosi.Engine]:
    db = build(tmp_path_factory.mktemp("pstart") / "p.duckdb")
    eng = dosi.Engine(
        model_text=model(_metrics()), connections={"duck": {"type": "duckdb", "uri": str(db)}}
    )
    yield eng
    eng.close()


def _sum(rows: list[int | None]) -> int | None:
    vals = [a for a in rows if a is not None]
    return sum(vals) if vals else None


def _revenue(keep: Any) -> int | None:
    return _sum([a for _, c, d, a in ORDERS if d is not None and keep(c, d)])


def _days(customer: int | None = None) -> list[dt.date]:
    return sorted({d for _, c, d, _a in ORDERS if d is not None and customer in (None, c)})


def _day(v: Any) -> dt.date:
    return dt.date.fromisoformat(str(v)[:10])


def _run(eng: dosi.Engine, metrics: list[str], group_by: list[str], **kw: Any) -> list[dict]:
    res = eng.execute({"metrics": metrics, "group_by": group_by, **kw})
    return [r for r in res["rows"] if r[res["columns"][0]] is not None]


def test_day_reads_the_month_first_day(engine: dosi.Engine) -> None:
    rows = _run(engine, ["revenue", "rev_mstart", "rev_since_mstart"], ["metric_time:day"])
    got = {_day(r["metric_time__day"]): (r["rev_mstart"], r["rev_since_mstart"]) for r in rows}
    want = {}
    for d in _days():
        first = _revenue(lambda c, x, d=d: x == d.replace(day=1))
        cur = _revenue(lambda c, x, d=d: x == d)
        delta = None if first is None or cur is None else cur - first
        want[d] = (first, delta)
    assert got == want
    assert want[dt.date(2024, 2, 29)] == (None, None)  # 1 February has no order: NULL
    assert want[dt.date(2024, 1, 31)] == (15, -11)


def test_time_range_widens_to_the_period_start(engine: dosi.Engine) -> None:
    """A range starting mid-month still reads the month's first day (scan widened, then
    trimmed back)."""
    rows = _run(
        engine,
        ["rev_mstart"],
        ["metric_time:day"],
        time_range={"start": "2024-01-03", "end": "2024-03-02"},
    )
    got = {_day(r["metric_time__day"]): r["rev_mstart"] for r in rows}
    want = {
        d: _revenue(lambda c, x, d=d: x == d.replace(day=1))
        for d in _days()
        if dt.date(2024, 1, 3) <= d < dt.date(2024, 3, 2)
    }
    assert got == want
    assert got[dt.date(2024, 1, 3)] == 15


def test_month_grain_is_the_bucket_itself_and_quarter_reads_its_first_month(
    engine: dosi.Engine,
) -> None:
    rows = _run(engine, ["revenue", "rev_mstart", "rev_qstart"], ["metric_time:month"])
    got = {_day(r["metric_time__month"]): (r["rev_mstart"], r["rev_qstart"]) for r in rows}

    def month(d: dt.date) -> dt.date:
        return d.replace(day=1)

    want = {}
    for m in sorted({month(d) for d in _days()}):
        q = m.replace(month=(m.month - 1) // 3 * 3 + 1)
        want[m] = (
            _revenue(lambda c, x, m=m: month(x) == m),
            _revenue(lambda c, x, q=q: month(x) == q),
        )
    assert got == want
    assert want[dt.date(2024, 3, 1)][1] == 26  # March reads January


def test_partitioned_by_the_other_group_by(engine: dosi.Engine) -> None:
    rows = _run(engine, ["rev_mstart"], ["metric_time:day", "orders.customer_id"])
    got = {(_day(r["metric_time__day"]), r["customer_id"]): r["rev_mstart"] for r in rows}
    want = {}
    for cust in (1, 2, 3):
        for d in _days(cust):
            want[(d, cust)] = _revenue(lambda c, x, d=d, k=cust: c == k and x == d.replace(day=1))
    assert got == want
    assert want[(dt.date(2024, 1, 31), 3)] is None  # customer 3 had no order on 1 January


def test_week_grain_is_misaligned(engine: dosi.Engine) -> None:
    """A week bucket does not lie inside one month: its month start is no week bucket."""
    with pytest.raises(dosi.QueryError) as info:
        engine.execute({"metrics": ["rev_mstart"], "group_by": ["metric_time:week"]})
    assert info.value.code == "window_offset_misaligned"
    with pytest.raises(dosi.QueryError) as info:
        engine.execute({"metrics": ["rev_mstart"], "group_by": ["metric_time:year"]})
    assert info.value.code == "window_offset_misaligned"


@pytest.mark.parametrize(
    "window",
    [
        {"offset": {"period_start": "month", "count": 1}, "calculation": "value"},
        {"offset": {"period_start": "fortnight"}, "calculation": "value"},
    ],
)
def test_bad_payloads(window: dict[str, Any]) -> None:
    text = model([metric("bad", "SUM(orders.amount)", {"v": "1.15", "window": window})])
    with pytest.raises(ModelError) as info:
        dosi.Engine(model_text=text)
    assert "invalid_datus_extension" in {d.code for d in info.value.issues}


def test_version_gate() -> None:
    """period_start is a 1.15 shape: a payload declaring 1.14 gets the newer-key warning
    (and the shape is honoured, ENV-V-08)."""
    eng = dosi.Engine(
        model_text=model([metric("old", "SUM(orders.amount)", {"v": "1.14", "window": W})])
    )
    try:
        codes = {w["code"] for w in eng.warnings}
    finally:
        eng.close()
    assert "datus_ext_key_newer_than_declared" in codes
