"""Two shapes the period sampling step answers (issue 22 items 3 and 7, the MetricFlow bed's
derived cumulative and date-part offset questions):

- a D-DERIVE compose over `period_value` frames, grouped coarser than their grain, is the
  compose of its inputs' sampled values, computed per coarser bucket (for `first` / `last`
  and affine composes of averages also the sampled compose), never composed from the
  month's own running values;
- an offset of an additive base grouped by date parts of its axis alone is computed on every
  day its shifted value reaches and summed into each part (a linear compose of offsets too).

Values on DuckDB over densekit's gappy sales (January, March and June only), expected from
plain Python walking the days, and the date-part sums also from hand-written SQL.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest
from densekit import SALES, build
from enginekit import dataset, field, metric, model_doc, to_yaml

from dosi.engine import Engine
from dosi.errors import OsiError


def _w(window: dict[str, Any]) -> dict[str, Any]:
    return {"v": "1.15", "window": window}


def _compose(expr: str) -> dict[str, Any]:
    return {"v": "1.4", "derive": {"type": "compose", "expr": expr}}


def _cum(pick: str) -> dict[str, Any]:
    return _w({"type": "cumulative", "function": "sum", "period_value": pick})


LAG = {"offset": {"count": 7, "granularity": "day"}, "calculation": "value"}
#: a compose's expression is its inputs' aggregates expanded (D-DERIVE gates it against `expr`)
METRICS = [
    metric("revenue", "SUM(sales.amount)"),
    metric("orders", "COUNT(DISTINCT sales.sale_id)"),
    metric("run_last", "SUM(sales.amount)", _cum("last")),
    metric("run_first", "SUM(sales.amount)", _cum("first")),
    metric("run_avg", "SUM(sales.amount)", _cum("average")),
    metric("last_sq", "SUM(sales.amount) * SUM(sales.amount)", _compose("run_last * run_last")),
    metric("avg_less_10", "(SUM(sales.amount) - 10) / 2", _compose("(run_avg - 10) / 2")),
    metric("avg_sq", "SUM(sales.amount) * SUM(sales.amount)", _compose("run_avg * run_avg")),
    metric("mixed", "SUM(sales.amount) - SUM(sales.amount)", _compose("run_last - run_first")),
    metric("lag7", "SUM(sales.amount)", _w(LAG)),
    metric("lag7_orders", "COUNT(DISTINCT sales.sale_id)", _w(LAG)),
    metric("lag7_pct", "SUM(sales.amount)", _w({**LAG, "calculation": "percent_change"})),
    metric("lag7_x2", "2 * SUM(sales.amount)", _compose("2 * lag7")),
    metric("lag7_plus1", "SUM(sales.amount) + 1", _compose("lag7 + 1")),
]


def _model() -> str:
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
    return to_yaml(model_doc([sales], metrics=METRICS))


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("sampled_compose") / "s.duckdb")


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    eng = Engine(model_text=_model())
    yield eng
    eng.close()


def _month_values(engine: Engine, db: Path, names: list[str]) -> dict[str, dict[str, Any]]:
    res = engine.execute({"metrics": names, "group_by": ["metric_time:month"]}, db_path=db)
    return {n: {r["metric_time__month"]: r[n] for r in res["rows"]} for n in names}


def _running_by_month() -> dict[str, list[Decimal]]:
    """The running total of every day with sales, listed per month (plain Python)."""
    out: dict[str, list[Decimal]] = {}
    total = Decimal(0)
    for _, d, _, a in sorted(SALES, key=lambda s: s[1]):
        total += a
        out.setdefault(d.replace(day=1).isoformat(), []).append(total)
    return out


def test_a_compose_over_last_values_is_the_compose_of_the_last_day(
    engine: Engine, db: Path
) -> None:
    """issue 22 item 7: `run_last * run_last` per month is the square of the month's last
    running value (any expression, since one day stands for the month)."""
    got = _month_values(engine, db, ["last_sq"])["last_sq"]
    want = {m: v[-1] * v[-1] for m, v in _running_by_month().items()}
    assert {k: Decimal(str(v)) for k, v in got.items()} == want
    assert want["2024-01-01"] == 225  # (10 + 5) squared


def test_an_affine_compose_over_averages_is_the_average_of_the_compose(
    engine: Engine, db: Path
) -> None:
    """(avg - 10) / 2 = avg((x - 10) / 2): January's days run 10 and 15, so 1.25."""
    got = _month_values(engine, db, ["avg_less_10"])["avg_less_10"]
    months = _running_by_month()
    want = {m: (sum(v) / len(v) - 10) / 2 for m, v in months.items()}
    assert {k: float(v) for k, v in got.items()} == {k: float(v) for k, v in want.items()}
    assert float(got["2024-01-01"]) == 1.25


def test_a_compose_of_sampled_values_is_computed_per_bucket(engine: Engine, db: Path) -> None:
    """A compose that sampling its day series would change is computed per coarser bucket
    from its inputs' sampled values (1.15, MetricFlow's derived metric over cumulative
    inputs): `run_avg * run_avg` is the square of the month's average, `run_last - run_first`
    the month's last running value less its first."""
    got = _month_values(engine, db, ["avg_sq", "mixed"])
    months = _running_by_month()
    want_sq = {m: (sum(v) / len(v)) ** 2 for m, v in months.items()}
    want_mixed = {m: v[-1] - v[0] for m, v in months.items()}
    assert {k: float(v) for k, v in got["avg_sq"].items()} == pytest.approx(
        {k: float(v) for k, v in want_sq.items()}
    )
    assert {k: Decimal(str(v)) for k, v in got["mixed"].items()} == want_mixed
    assert want_mixed["2024-01-01"] == 5  # January runs 10 then 15


def test_a_compose_at_the_accumulation_grain_is_not_sampled(engine: Engine, db: Path) -> None:
    """By day there is nothing to sample: the compose of the day's values, as before."""
    res = engine.execute({"metrics": ["avg_sq"], "group_by": ["metric_time:day"]}, db_path=db)
    got = [r["avg_sq"] for r in res["rows"]]
    running = [v for vs in _running_by_month().values() for v in vs]
    assert [Decimal(str(g)) for g in got] == [v * v for v in running]


# -- offsets rolled up to date parts -----------------------------------------------------------
def _part(d: dt.date, part: str) -> int:
    if part == "month_of_year":
        return d.month
    if part == "quarter_of_year":
        return (d.month - 1) // 3 + 1
    return d.isoweekday()  # day_of_week: ISO, 1 = Monday (docs/calendar.md)


def _lag_by_part(part: str, scale: int = 1) -> dict[int, Decimal]:
    """Each sale counts on the day 7 days after it (the offset's value there), by part."""
    out: dict[int, Decimal] = {}
    for _, d, _, a in SALES:
        k = _part(d + dt.timedelta(days=7), part)
        out[k] = out.get(k, Decimal(0)) + a * scale
    return out


@pytest.mark.parametrize("part", ["month_of_year", "quarter_of_year", "day_of_week"])
def test_an_offset_by_a_date_part_sums_the_shifted_days(
    engine: Engine, db: Path, part: str
) -> None:
    """issue 22 item 3: June 30's sale is July 7's 7-day-ago value, so July has 1 although no
    sale is in July (the covered series runs past the data); a linear compose scales."""
    res = engine.execute(
        {"metrics": ["lag7", "lag7_x2"], "group_by": [f"metric_time:{part}"]}, db_path=db
    )
    col = f"metric_time__{part}"
    got = {int(r[col]): Decimal(str(r["lag7"])) for r in res["rows"]}
    got2 = {int(r[col]): Decimal(str(r["lag7_x2"])) for r in res["rows"]}
    assert got == _lag_by_part(part)
    assert got2 == _lag_by_part(part, 2)
    if part == "month_of_year":
        assert got == {1: 15, 3: 7, 6: 3, 7: 1}


def test_the_date_part_sums_match_hand_sql(engine: Engine, db: Path) -> None:
    res = engine.execute(
        {"metrics": ["lag7"], "group_by": ["metric_time:month_of_year"]}, db_path=db
    )
    con = duckdb.connect(str(db), read_only=True)
    try:
        hand = con.execute(
            "SELECT month(sale_date + INTERVAL 7 DAY) AS m, SUM(amount) FROM sales "
            "GROUP BY 1 ORDER BY 1"
        ).fetchall()
    finally:
        con.close()
    assert sorted((int(r["metric_time__month_of_year"]), r["lag7"]) for r in res["rows"]) == [
        (int(m), v) for m, v in hand
    ]


@pytest.mark.parametrize("name", ["lag7_orders", "lag7_pct", "lag7_plus1"])
def test_offsets_whose_days_do_not_add_up_stay_refused(engine: Engine, name: str) -> None:
    """A distinct count's days do not add up, a percent change neither, and a constant term
    would be added once per day: still window_on_date_part."""
    with pytest.raises(OsiError) as err:
        engine.compile({"metrics": [name], "group_by": ["metric_time:month_of_year"]})
    assert err.value.code == "window_on_date_part"
