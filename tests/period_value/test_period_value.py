"""D-WINDOW `period_value` (issue 22 item 7): a running total or a period-to-date value grouped
by a grain coarser than the one it accumulates at reports the first, last or average of the
finer running values. Values on DuckDB over a table with gaps (densekit.SALES: no sales in
February, April, May), against plain Python (periodkit.expected). Requirement IDs: WIN-CUM-01
and WIN-CUM-02 (the cumulative sugar), WIN-FRM-05 and WIN-FRM-17 (resets, the scan aligned to
the reset period), WIN-QRY-03 (a reset finer than the query grain stays window_reset_too_fine
without period_value), WIN-PAY-06 (unknown keys rejected).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from densekit import SALES, build
from enginekit import same
from periodkit import METRICS, expected, model_text

from dosi.engine import Engine
from dosi.errors import DiagnosticSink, OsiError
from dosi.ext.window import parse_window
from dosi.ext.window.period_value import nests

D = dt.date


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("period") / "sales.duckdb")


@pytest.fixture(scope="module")
def engine() -> Any:
    eng = Engine(model_text=model_text())
    yield eng
    eng.close()


def _got(res: dict[str, Any], grain: str, by_region: bool = False) -> dict[Any, Any]:
    key = f"metric_time__{grain}"
    out = {}
    for r in res["rows"]:
        b = D.fromisoformat(r[key])
        k = (b, r["region"]) if by_region else b
        out[k] = next(v for c, v in r.items() if c not in (key, "region"))
    return out


def _check(got: dict[Any, Any], want: dict[Any, Any]) -> None:
    assert set(got) == set(want), (sorted(got), sorted(want))
    for k, v in want.items():
        g = got[k]
        assert (g is None and v is None) or (
            g is not None and v is not None and same(float(g), v)
        ), (k, g, v)


CASES = [
    (name, grain, dense, span)
    for name in METRICS
    for grain in ("month", "quarter")
    for dense in (False, True)
    for span in (None, (D(2024, 1, 10), D(2024, 6, 15)))
]


@pytest.mark.parametrize(("name", "grain", "dense", "span"), CASES)
def test_sampled_values(
    engine: Any, db: Path, name: str, grain: str, dense: bool, span: Any
) -> None:
    """first / last / average of the daily running values per month and quarter, sparse and
    densified, with and without a time_range (WIN-CUM-02, WIN-FRM-17)."""
    q: dict[str, Any] = {"metrics": [name], "group_by": [f"metric_time:{grain}"]}
    if dense:
        q["densify"] = "time"
    start = end = None
    if span is not None:
        start, end = span
        q["time_range"] = {"start": start.isoformat(), "end": end.isoformat()}
    res = engine.execute(q, db_path=db)
    _check(_got(res, grain), expected(SALES, name, grain, start, end, dense))


@pytest.mark.parametrize("dense", [False, True])
@pytest.mark.parametrize("name", ["run_last", "mtd_first", "run_avg"])
def test_sampled_per_region(engine: Any, db: Path, name: str, dense: bool) -> None:
    """Each region's running values are sampled apart; densified, a region without sales in a
    month still reports its carried running value (the series crosses the regions)."""
    q: dict[str, Any] = {
        "metrics": [name],
        "group_by": ["metric_time:quarter", "sales.region"],
        "time_range": {"start": "2024-01-01", "end": "2024-07-01"},
    }
    if dense:
        q["densify"] = "time"
    res = engine.execute(q, db_path=db)
    want = expected(SALES, name, "quarter", D(2024, 1, 1), D(2024, 7, 1), dense, by_region=True)
    _check(_got(res, "quarter", by_region=True), want)


def test_month_end_values_by_hand(engine: Any, db: Path) -> None:
    """The running total's month-end values, written out: January 15, March 22, June 26; the
    first running value of each month is its first sale day's (January 10, March 22, June 25)."""
    q = {"metrics": ["run_last"], "group_by": ["metric_time:month"]}
    rows = engine.execute(q, db_path=db)["rows"]
    assert [(r["metric_time__month"], float(r["run_last"])) for r in rows] == [
        ("2024-01-01", 15.0),
        ("2024-03-01", 22.0),
        ("2024-06-01", 26.0),
    ]
    q = {"metrics": ["run_first"], "group_by": ["metric_time:month"], "densify": "time"}
    rows = engine.execute(q, db_path=db)["rows"]
    # densified: February 1 carries January's total; the first of March has no March sale yet
    assert [float(r["run_first"]) for r in rows] == [10.0, 15.0, 15.0, 22.0, 22.0, 22.0]


def test_general_form_and_month_grain(engine: Any, db: Path) -> None:
    """`window.frame.period_value` reads as the sugar's; a monthly accumulation sampled by
    year takes the first month's running value (January's total, 15)."""
    q = {"metrics": ["run_general"], "group_by": ["metric_time:quarter"]}
    got = _got(engine.execute(q, db_path=db), "quarter")
    assert {k: float(v) for k, v in got.items()} == {D(2024, 1, 1): 22.0, D(2024, 4, 1): 26.0}
    q = {"metrics": ["run_monthly"], "group_by": ["metric_time:year"]}
    rows = engine.execute(q, db_path=db)["rows"]
    assert [float(r["run_monthly"]) for r in rows] == [15.0]


def test_at_the_accumulation_grain_nothing_is_sampled(engine: Any, db: Path) -> None:
    """Grouped by day, a period_value metric is the plain running value."""
    q = {"metrics": ["run_last"], "group_by": ["metric_time:day"]}
    rows = engine.execute(q, db_path=db)["rows"]
    assert [float(r["run_last"]) for r in rows] == [10.0, 15.0, 22.0, 25.0, 26.0]
    assert "PeriodSample" not in engine.explain(q)


def test_explain_shows_the_sample(engine: Any) -> None:
    text = engine.explain({"metrics": ["mtd_avg"], "group_by": ["metric_time:quarter"]})
    assert (
        "PeriodSample by [metric_time__quarter] of metric_time__day (day): mtd_avg=average" in text
    )


def test_refusals(engine: Any) -> None:
    """A reset finer than the query grain without period_value stays window_reset_too_fine
    (WIN-QRY-03); a plain metric cannot be rebuilt from day rows; two accumulation grains
    are two series."""
    cases = [
        ({"metrics": ["mtd_plain"], "group_by": ["metric_time:quarter"]}, "window_reset_too_fine"),
        (
            {"metrics": ["run_monthly", "run_last"], "group_by": ["metric_time:year"]},
            "not_implemented",
        ),
        (
            {"metrics": ["run_last", "revenue"], "group_by": ["metric_time:month"]},
            "not_implemented",
        ),
    ]
    for q, code in cases:
        with pytest.raises(OsiError) as err:
            engine.compile(q)
        assert err.value.code == code, (q, err.value.message)


def test_nesting() -> None:
    """Days nest in every grain, months in quarters and (fiscal) years; weeks in no month."""
    assert nests("day", "week") and nests("day", "retail_month") and nests("hour", "day")
    assert nests("month", "quarter") and nests("month", "fiscal_year")
    assert not nests("week", "month") and not nests("quarter", "month")


@pytest.mark.parametrize(
    ("window", "key"),
    [
        (
            {"type": "cumulative", "function": "sum", "period_value": "median"},
            "window.period_value",
        ),
        (
            {
                "type": "cumulative",
                "function": "sum",
                "period_value": {"value": "last", "grain": "week"},
            },
            "window.period_value.grain",
        ),
        (
            {"type": "cumulative", "function": "sum", "period_value": {"pick": "last"}},
            "window.period_value.pick",
        ),
        (
            {"frame": {"function": "sum", "scope": "partition", "period_value": "last"}},
            "window.frame.period_value",
        ),
        # an offset takes period_value since 1.15 (tests/window/test_offset_period_value.py)
        ({"type": "pop", "offset": "1 month", "period_value": "median"}, "window.period_value"),
    ],
)
def test_invalid_payloads(window: dict[str, Any], key: str) -> None:
    """Each mistake names its key path (WIN-PAY-06: unknown keys are rejected)."""
    sink = DiagnosticSink()
    assert parse_window(window, path="metric:m", sink=sink).spec is None
    assert any(f"`{key}" in d.message for d in sink.items), [d.message for d in sink.items]


def test_version_gate() -> None:
    """period_value is a 1.14 shape: a payload declaring 1.13 gets the newer-key warning."""
    text = model_text().replace('"v": "1.14"', '"v": "1.13"')
    eng = Engine(model_text=text)
    try:
        codes = {w["code"] for w in eng.warnings}
    finally:
        eng.close()
    assert "datus_ext_key_newer_than_declared" in codes
