"""`dosi import dbt` and the query translator on time (issue 22): a dbt-core project with a day
time spine carrying a custom granularity, an hourly time dimension and a daily one. The import
makes the spine dosi's calendar table (DATUS `calendar.table`) and keeps the sub-day grain; the
translator maps MetricFlow's date parts, sub-day grains and custom granularities onto dosi's, and
picks metric_time's default grain as MetricFlow does. Every value is computed here in plain
Python over the rows this test writes. `dosi export dbt` writes the calendar back as the
project's time spine, and importing that gives the same calendar. Requirement IDs: CORE-MOD-01
(the written model loads), GRAIN-01 / GRAIN-05 (time_granularity on a time field, grouped at
it or coarser), CORE-Q-05 (metric_time resolves per metric), CORE-Q-07 (each metric's own
time), WIN-OFF-06 (an offset reads the shifted bucket, NULL when empty).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml

from dosi.engine import Engine
from dosi.exporters.dbt import export_dbt
from dosi.importers.dbt import import_dbt
from dosi.importers.dbt.manifest import load_manifest
from dosi.importers.dbt.names import DbtNames
from dosi.importers.dbt.queries import QueryTranslator

PROJECT: dict[str, Any] = {
    "models": [
        {
            "name": "spine",
            "time_spine": {
                "standard_granularity_column": "ds",
                "custom_granularities": [{"name": "sprint", "column_name": "sprint_start"}],
            },
            "columns": [{"name": "ds", "granularity": "day"}],
        }
    ],
    "semantic_models": [
        {
            "name": "visits",
            "model": "ref('visits')",
            "defaults": {"agg_time_dimension": "ts"},
            "entities": [{"name": "visit", "type": "primary", "expr": "id"}],
            "dimensions": [
                {"name": "ts", "type": "time", "type_params": {"time_granularity": "hour"}},
            ],
            "measures": [{"name": "visit_count", "agg": "sum", "expr": "1"}],
        },
        {
            "name": "sales",
            "model": "ref('sales')",
            "defaults": {"agg_time_dimension": "sold_on"},
            "entities": [{"name": "sale", "type": "primary", "expr": "id"}],
            "dimensions": [
                {"name": "sold_on", "type": "time", "type_params": {"time_granularity": "day"}},
                {"name": "month", "type": "time", "type_params": {"time_granularity": "month"}},
            ],
            "measures": [
                {"name": "amount", "agg": "sum"},
                {
                    "name": "monthly_amount",
                    "agg": "sum",
                    "expr": "amount",
                    "agg_time_dimension": "month",
                },
            ],
        },
    ],
    "metrics": [
        {"name": "visits", "type": "simple", "type_params": {"measure": "visit_count"}},
        {"name": "revenue", "type": "simple", "type_params": {"measure": "amount"}},
        {"name": "monthly_revenue", "type": "simple", "type_params": {"measure": "monthly_amount"}},
        {
            "name": "visits_prev_hour",
            "type": "derived",
            "type_params": {
                "expr": "visits",
                "metrics": [{"name": "visits", "offset_window": "1 hour"}],
            },
        },
        {
            "name": "revenue_since_month_start",
            "type": "derived",
            "type_params": {
                "expr": "revenue - revenue_start",
                "metrics": [
                    {"name": "revenue"},
                    {"name": "revenue", "alias": "revenue_start", "offset_to_grain": "month"},
                ],
            },
        },
    ],
}

START = dt.date(2024, 1, 1)
VISITS = [dt.datetime(2024, 1, 1, 0, 10) + dt.timedelta(minutes=97 * i) for i in range(120)]
SALES = [(START + dt.timedelta(days=(5 * i) % 75), 10 + i) for i in range(60)]


def _sprint(d: dt.date) -> dt.date:
    """Sprints of 14 days from 2023-12-25 (the spine's custom granularity)."""
    first = dt.date(2023, 12, 25)
    return first + dt.timedelta(days=(d - first).days // 14 * 14)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("dbt_calendar")
    (folder / "models").mkdir()
    (folder / "models" / "semantic.yml").write_text(yaml.safe_dump(PROJECT, sort_keys=False))
    db = folder / "cal.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE spine (ds DATE, sprint_start DATE)")
    days = [dt.date(2023, 12, 1) + dt.timedelta(days=i) for i in range(200)]
    con.executemany("INSERT INTO spine VALUES (?, ?)", [(d, _sprint(d)) for d in days])
    con.execute("CREATE TABLE visits (id INTEGER, ts TIMESTAMP)")
    con.executemany("INSERT INTO visits VALUES (?, ?)", list(enumerate(VISITS)))
    con.execute("CREATE TABLE sales (id INTEGER, sold_on DATE, month DATE, amount INTEGER)")
    con.executemany(
        "INSERT INTO sales VALUES (?, ?, ?, ?)",
        [(i, d, d.replace(day=1), a) for i, (d, a) in enumerate(SALES)],
    )
    con.close()
    return folder, db


@pytest.fixture(scope="module")
def imported(project: tuple[Path, Path]) -> tuple[Engine, QueryTranslator, dict[str, Any]]:
    folder, db = project
    conv = import_dbt(folder, schema="main", name="cal")
    plain = conv.plain()
    engine = Engine(
        model_text=conv.yaml(), connections={"duck": {"type": "duckdb", "uri": str(db)}}
    )
    names = DbtNames(load_manifest(folder, "main"))
    metrics = {m["name"] for m in plain["semantic_model"][0]["metrics"]}
    return engine, QueryTranslator(names, metrics), plain


def _ask(
    imported: tuple[Engine, QueryTranslator, dict[str, Any]], **kw: Any
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    engine, translator, _ = imported
    t = translator.translate(**kw)
    assert not t.needs, t.problems
    return t.query, engine.execute(t.query).arrow.to_pylist()


def _sums(rows: list[Any], key: Callable[[Any], Any], value: Callable[[Any], int]) -> dict:
    out: dict[Any, int] = defaultdict(int)
    for r in rows:
        out[key(r)] += value(r)
    return dict(out)


def _plain(v: Any) -> Any:
    if isinstance(v, dt.datetime):
        return v.date() if v.time() == dt.time() else v
    return v


def test_time_spine_becomes_the_calendar_table(imported: Any) -> None:
    """The spine is a dataset keyed by its day, named as the model's calendar table, with its
    custom granularity as a table grain; it is not a semantic model with measures."""
    model = imported[2]["semantic_model"][0]
    spine = next(d for d in model["datasets"] if d["name"] == "spine")
    assert spine["primary_key"] == ["ds"]
    assert {f["name"] for f in spine["fields"]} == {"ds", "sprint"}
    datus = [e for e in model["custom_extensions"] if e["vendor_name"] == "DATUS"]
    assert (
        '"table": {"dataset": "spine", "date": "ds", "grains": {"sprint": "sprint"}}'
        in (datus[0]["data"])
    )


def test_custom_granularity_groups_through_the_calendar(imported: Any) -> None:
    """`metric_time__sprint` rolls sales days up into the spine's sprints."""
    query, rows = _ask(imported, metrics=["revenue"], group_by=["metric_time__sprint"])
    assert query["group_by"] == ["metric_time:sprint"]
    got = {_plain(r["metric_time__sprint"]): int(r["revenue"]) for r in rows}
    assert got == _sums(SALES, lambda s: _sprint(s[0]), lambda s: s[1])


@pytest.mark.parametrize(
    ("part", "fn"),
    [
        ("dow", lambda d: d.isoweekday()),  # MetricFlow's ISO numbering: 1 = Monday
        ("doy", lambda d: d.timetuple().tm_yday),
        ("day", lambda d: d.day),
        ("month", lambda d: d.month),
        ("quarter", lambda d: (d.month - 1) // 3 + 1),
        ("year", lambda d: d.year),
        ("week", lambda d: d.isocalendar()[1]),
    ],
)
def test_date_parts_keep_metricflow_numbering(
    imported: Any, part: str, fn: Callable[[dt.date], int]
) -> None:
    """MetricFlow's EXTRACT parts, as dosi date parts, give MetricFlow's numbers."""
    _, rows = _ask(
        imported, metrics=["revenue"], group_by_objs=[{"name": "metric_time", "date_part": part}]
    )
    col = next(c for c in rows[0] if c != "revenue")
    got = {int(r[col]): int(r["revenue"]) for r in rows}
    assert got == _sums(SALES, lambda s: fn(s[0]), lambda s: s[1])


def test_sub_day_grain_and_time_constraint(imported: Any) -> None:
    """An hourly time dimension groups by the hour; a constraint with times of day is widened
    to whole hours, as MetricFlow does."""
    query, rows = _ask(
        imported,
        metrics=["visits"],
        group_by=["metric_time__hour"],
        time_constraint=("2024-01-02 03:20:00", "2024-01-03 05:00:00"),
    )
    assert query["time_range"] == {"start": "2024-01-02T03:00:00", "end": "2024-01-03T06:00:00"}
    lo, hi = dt.datetime(2024, 1, 2, 3), dt.datetime(2024, 1, 3, 6)
    want = _sums(
        [v for v in VISITS if lo <= v < hi],
        lambda v: v.replace(minute=0),
        lambda _: 1,
    )
    assert {r["metric_time__hour"]: int(r["visits"]) for r in rows} == want


def test_sub_daily_metric_defaults_to_day_and_offsets_by_the_hour(imported: Any) -> None:
    """metric_time without a grain is the day for an hourly axis (MetricFlow's default); an
    `offset_window: 1 hour` reads the hour before, and (densify covered, MetricFlow's spine
    join) answers on every hour after one with visits, the one after the last included."""
    query, rows = _ask(imported, metrics=["visits"], group_by=["metric_time"])
    assert query["group_by"] == ["metric_time:day"]
    assert {_plain(r["metric_time__day"]): int(r["visits"]) for r in rows} == _sums(
        VISITS, lambda v: v.date(), lambda _: 1
    )
    _, rows = _ask(imported, metrics=["visits_prev_hour"], group_by=["metric_time__hour"])
    hours = _sums(VISITS, lambda v: v.replace(minute=0), lambda _: 1)
    got = {r["metric_time__hour"]: r["visits_prev_hour"] for r in rows}
    assert got == {h + dt.timedelta(hours=1): n for h, n in hours.items()}


def test_mixed_grains_ask_by_the_coarsest(imported: Any) -> None:
    """A monthly metric beside a daily one: metric_time defaults to the month, and a
    constraint is widened to whole months on each metric's own axis."""
    query, rows = _ask(
        imported,
        metrics=["monthly_revenue", "revenue"],
        group_by=["metric_time"],
        time_constraint=("2024-01-15", "2024-02-10"),
    )
    assert query["group_by"] == ["metric_time:month"]
    assert query["time_range"] == {"start": "2024-01-01", "end": "2024-03-01"}
    in_range = [s for s in SALES if s[0] < dt.date(2024, 3, 1)]
    want = _sums(in_range, lambda s: s[0].replace(day=1), lambda s: s[1])
    got = {_plain(r["metric_time__month"]): int(r["revenue"]) for r in rows}
    assert got == want
    assert all(int(r["monthly_revenue"]) == int(r["revenue"]) for r in rows)


def test_export_writes_the_calendar_back_as_the_time_spine(imported: Any, tmp_path: Path) -> None:
    """`dosi export dbt` writes the calendar dataset as the project's time spine (not a
    semantic model); importing the export gives the same calendar table."""
    exported = export_dbt(imported[2]).data
    assert "spine" not in {sm["name"] for sm in exported["semantic_models"]}
    assert exported["models"][0]["time_spine"] == {
        "standard_granularity_column": "ds",
        "custom_granularities": [{"name": "sprint", "column_name": "sprint_start"}],
    }
    (tmp_path / "semantic.yml").write_text(yaml.safe_dump(exported, sort_keys=False))
    again = import_dbt(tmp_path, schema="main", name="cal").plain()["semantic_model"][0]
    first = imported[2]["semantic_model"][0]
    spine = [d for d in first["datasets"] if d["name"] == "spine"]
    assert [d for d in again["datasets"] if d["name"] == "spine"] == spine
    datus = [e for e in again["custom_extensions"] if e["vendor_name"] == "DATUS"]
    assert datus == [e for e in first["custom_extensions"] if e["vendor_name"] == "DATUS"]


def test_semantic_manifest_json_keeps_the_calendar(
    project: tuple[Path, Path], imported: Any, tmp_path: Path
) -> None:
    """A compiled semantic_manifest.json (database-qualified relations) gives the same
    calendar dataset, reading the spine in the schema passed in."""
    manifest = load_manifest(project[0], "main")
    rel = manifest.project_configuration.time_spines[0].node_relation
    rel.database, rel.relation_name = "warehouse", '"warehouse"."main"."spine"'
    path = tmp_path / "semantic_manifest.json"
    path.write_text(manifest.json())
    again = import_dbt(path, schema="main", name="cal").plain()["semantic_model"][0]
    spine = next(d for d in again["datasets"] if d["name"] == "spine")
    assert spine["source"] == "main.spine"
    first = next(d for d in imported[2]["semantic_model"][0]["datasets"] if d["name"] == "spine")
    assert spine == first


def test_custom_granularity_in_a_where_filter(imported: Any) -> None:
    """`TimeDimension('metric_time', 'sprint')` in a where compares each day's sprint from the
    calendar table (dosi's `sales.sold_on:sprint`), not a range of days."""
    cut = dt.date(2024, 1, 22)
    query, rows = _ask(
        imported,
        metrics=["revenue"],
        group_by=["metric_time__day"],
        where=["{{ TimeDimension('metric_time', 'sprint') }} >= '2024-01-22'"],
    )
    assert "sales.sold_on:sprint" in query["where_sql"]
    got = {_plain(r["metric_time__day"]): int(r["revenue"]) for r in rows}
    assert got == _sums([s for s in SALES if _sprint(s[0]) >= cut], lambda s: s[0], lambda s: s[1])


def test_offset_to_grain_reads_the_month_first_day(imported: Any) -> None:
    """`offset_to_grain: month` is D-WINDOW 1.15 `offset.period_start`: each day reads the
    revenue of its month's first day (NULL when that day has no sale)."""
    model = imported[2]["semantic_model"][0]
    helper = next(m for m in model["metrics"] if m["name"].endswith("__revenue_start"))
    assert '"period_start": "month"' in helper["custom_extensions"][0]["data"]
    _, rows = _ask(imported, metrics=["revenue_since_month_start"], group_by=["metric_time__day"])
    by_day = _sums(SALES, lambda s: s[0], lambda s: s[1])
    want = {
        d: v - by_day[d.replace(day=1)] for d, v in by_day.items() if d.replace(day=1) in by_day
    }
    got = {
        _plain(r["metric_time__day"]): int(r["revenue_since_month_start"])
        for r in rows
        if r["revenue_since_month_start"] is not None
    }
    assert got == want
    assert dt.date(2024, 2, 1) not in by_day  # February's days read NULL
    assert any(d.month == 2 for d in by_day)
