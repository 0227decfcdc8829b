"""The query translator's time-spine modes (issue 22 item 1, MetricFlow's spine joins): a
dbt-core project with a day time spine and sales on a few days. Queries of offset and
cumulative metrics ask `densify: "covered"` (a row wherever an input has data after its shift
or within its window), a derived metric over a join_to_timespine input asks `"time"` (every
spine day); a date-part grouping asks neither. Expected rows are computed in plain Python
over the rows this test writes. Requirement IDs: WIN-OFF-01 (offsets), FILL-01 (fill_nulls_with
in empty buckets)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import duckdb
import pytest
import yaml

from dosi.engine import Engine
from dosi.importers.dbt import import_dbt
from dosi.importers.dbt.manifest import load_manifest
from dosi.importers.dbt.names import DbtNames
from dosi.importers.dbt.queries import QueryTranslator

D = dt.date
SPINE_DAYS = [D(2024, 1, 1) + dt.timedelta(days=i) for i in range(31)]
SALES = [(D(2024, 1, 3), 10), (D(2024, 1, 3), 5), (D(2024, 1, 4), 7), (D(2024, 1, 20), 2)]

PROJECT: dict[str, Any] = {
    "models": [
        {
            "name": "spine",
            "time_spine": {"standard_granularity_column": "ds"},
            "columns": [{"name": "ds", "granularity": "day"}],
        }
    ],
    "semantic_models": [
        {
            "name": "sales",
            "model": "ref('sales')",
            "defaults": {"agg_time_dimension": "sold_on"},
            "entities": [{"name": "sale", "type": "primary", "expr": "id"}],
            "dimensions": [
                {"name": "sold_on", "type": "time", "type_params": {"time_granularity": "day"}}
            ],
            "measures": [{"name": "amount", "agg": "sum"}],
        }
    ],
    "metrics": [
        {"name": "revenue", "type": "simple", "type_params": {"measure": "amount"}},
        {
            "name": "revenue_filled",
            "type": "simple",
            "type_params": {
                "measure": {"name": "amount", "fill_nulls_with": 0, "join_to_timespine": True}
            },
        },
        {
            "name": "revenue_week_ago",
            "type": "derived",
            "type_params": {
                "expr": "revenue",
                "metrics": [{"name": "revenue", "offset_window": "7 days"}],
            },
        },
        {
            "name": "revenue_wow",
            "type": "derived",
            "type_params": {
                "expr": "revenue - revenue_7",
                "metrics": [
                    {"name": "revenue"},
                    {"name": "revenue", "offset_window": "7 days", "alias": "revenue_7"},
                ],
            },
        },
        {
            "name": "filled_twice",
            "type": "derived",
            "type_params": {"expr": "2 * revenue_filled", "metrics": [{"name": "revenue_filled"}]},
        },
    ],
}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Engine, QueryTranslator]:
    folder = tmp_path_factory.mktemp("dbt_spine")
    (folder / "models").mkdir()
    (folder / "models" / "semantic.yml").write_text(yaml.safe_dump(PROJECT, sort_keys=False))
    db = folder / "spine.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE spine (ds DATE)")
    con.executemany("INSERT INTO spine VALUES (?)", [(d,) for d in SPINE_DAYS])
    con.execute("CREATE TABLE sales (id INTEGER, sold_on DATE, amount INTEGER)")
    con.executemany(
        "INSERT INTO sales VALUES (?, ?, ?)", [(i, d, a) for i, (d, a) in enumerate(SALES)]
    )
    con.close()
    conv = import_dbt(folder, schema="main", name="spine")
    metrics = {m["name"] for m in conv.plain()["semantic_model"][0]["metrics"]}
    engine = Engine(
        model_text=conv.yaml(), connections={"duck": {"type": "duckdb", "uri": str(db)}}
    )
    yield engine, QueryTranslator(DbtNames(load_manifest(folder, "main")), metrics)
    engine.close()


def _ask(imported: tuple[Engine, QueryTranslator], metric: str, **kw: Any) -> tuple[str, dict]:
    engine, translator = imported
    t = translator.translate(metrics=[metric], group_by=["metric_time__day"], **kw)
    assert not t.needs, t.problems
    rows = engine.execute(t.query).arrow.to_pylist()
    out = {}
    for r in rows:
        day = r["metric_time__day"]
        out[day.date() if isinstance(day, dt.datetime) else day] = r[metric]
    return t.query.get("densify"), out


def _daily() -> dict[dt.date, int]:
    out: dict[dt.date, int] = {}
    for d, a in SALES:
        out[d] = out.get(d, 0) + a
    return out


def test_an_offset_alone_answers_where_the_shifted_day_has_data(imported: Any) -> None:
    mode, got = _ask(imported, "revenue_week_ago")
    assert mode == "covered"
    assert got == {d + dt.timedelta(days=7): v for d, v in _daily().items()}


def test_an_offset_beside_its_base_answers_on_either_sides_days(imported: Any) -> None:
    """MetricFlow's FULL OUTER JOIN of the base and the shifted base over the spine."""
    mode, got = _ask(imported, "revenue_wow")
    assert mode == "covered"
    daily = _daily()
    days = set(daily) | {d + dt.timedelta(days=7) for d in daily}
    want = {}
    for d in days:
        now, before = daily.get(d), daily.get(d - dt.timedelta(days=7))
        want[d] = None if now is None or before is None else now - before
    assert got == want


def test_a_derived_metric_over_a_spine_joined_input_fills_every_spine_day(imported: Any) -> None:
    mode, got = _ask(imported, "filled_twice")
    assert mode == "time"
    daily = _daily()
    assert sorted(got) == SPINE_DAYS
    # the days with data as the input; an empty day is a row (the compose over the filled
    # input is not itself filled: D-FILL belongs to the metric that declares it)
    assert {d: v for d, v in got.items() if v is not None} == {d: 2 * v for d, v in daily.items()}


def test_a_date_part_grouping_densifies_nothing(imported: Any) -> None:
    _, translator = imported
    t = translator.translate(
        metrics=["revenue_week_ago"], group_by_objs=[{"name": "metric_time", "date_part": "dow"}]
    )
    assert "densify" not in t.query
