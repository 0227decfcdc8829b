"""`dosi import dbt` of MetricFlow's slowly changing dimensions (issue 20 bed, `scd_join`): a
semantic model with a `natural` entity and time dimensions carrying `validity_params`
(`is_start`, `is_end`) becomes a D-VALIDITY dataset (dosi 1.15 `validity`, listed in
`requires`), keyed by the natural key and the version start, and the fact's foreign entity
joins it at the version valid on the fact row's day.

Expected values are plain Python over the rows below: a booking on the day a version ends
reads the next one, a booking in a gap and one before the first version read none.
Requirement IDs: CORE-MOD-01 (the imported model loads), ENV-REQ-03 (`requires`).
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml

from dosi.engine import Engine
from dosi.exporters.dbt import export_dbt
from dosi.importers.dbt import import_dbt

D = dt.date
#: (listing_id, capacity, active_from, active_to)
LISTINGS = [
    (1, 2, D(2024, 1, 1), D(2024, 1, 5)),
    (1, 6, D(2024, 1, 5), D(2024, 1, 8)),  # then a gap until 01-10
    (1, 8, D(2024, 1, 10), None),
]
#: (booking_id, listing_id, ds)
BOOKINGS = [
    (1, 1, D(2024, 1, 4)),
    (2, 1, D(2024, 1, 5)),  # the boundary: the second version
    (3, 1, D(2024, 1, 9)),  # the gap
    (4, 1, D(2024, 1, 20)),
    (5, 1, D(2023, 12, 1)),  # before the first version
]
_DAY = {"time_granularity": "day"}
PROJECT: dict[str, Any] = {
    "bookings.yaml": {
        "semantic_model": {
            "name": "bookings",
            "node_relation": {"schema_name": "$source_schema", "alias": "scd_bookings"},
            "defaults": {"agg_time_dimension": "ds"},
            "entities": [
                {"name": "booking", "type": "primary", "expr": "booking_id"},
                {"name": "listing", "type": "foreign", "expr": "listing_id"},
            ],
            "dimensions": [{"name": "ds", "type": "time", "type_params": _DAY}],
            "measures": [{"name": "bookings", "agg": "count", "expr": "booking_id"}],
        }
    },
    "listings.yaml": {
        "semantic_model": {
            "name": "listings",
            "node_relation": {"schema_name": "$source_schema", "alias": "scd_listings"},
            "primary_entity": "listing_version",
            "entities": [{"name": "listing", "type": "natural", "expr": "listing_id"}],
            "dimensions": [
                {"name": "capacity", "type": "categorical"},
                {
                    "name": "active_from",
                    "type": "time",
                    "type_params": {**_DAY, "validity_params": {"is_start": True}},
                },
                {
                    "name": "active_to",
                    "type": "time",
                    "type_params": {**_DAY, "validity_params": {"is_end": True}},
                },
            ],
        }
    },
}
METRICS = [
    {"metric": {"name": "bookings", "type": "simple", "type_params": {"measure": "bookings"}}}
]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("dbt_scd")
    for name, doc in PROJECT.items():
        (root / name).write_text(yaml.safe_dump(doc, sort_keys=False))
    (root / "metrics.yaml").write_text(yaml.safe_dump_all(METRICS, sort_keys=False))
    con = duckdb.connect(str(root / "data.duckdb"))
    con.execute(
        "CREATE TABLE scd_listings (listing_id INT, capacity INT, active_from DATE, active_to DATE)"
    )
    con.executemany("INSERT INTO scd_listings VALUES (?, ?, ?, ?)", LISTINGS)
    con.execute("CREATE TABLE scd_bookings (booking_id INT, listing_id INT, ds DATE)")
    con.executemany("INSERT INTO scd_bookings VALUES (?, ?, ?)", BOOKINGS)
    con.close()
    return root


@pytest.fixture(scope="module")
def model(project: Path) -> dict[str, Any]:
    return import_dbt(project, schema="main").plain()


def _engine(model: dict[str, Any], project: Path) -> Engine:
    return Engine(
        model_text=yaml.safe_dump(model),
        connections={"db": {"type": "duckdb", "uri": str(project / "data.duckdb")}},
    )


def _capacity(listing: int, day: dt.date) -> int | None:
    hits = [c for i, c, a, b in LISTINGS if i == listing and a <= day and (b is None or day < b)]
    return hits[0] if hits else None


def test_the_scd_model_is_a_validity_dataset(model: dict[str, Any]) -> None:
    ds = next(d for d in model["semantic_model"][0]["datasets"] if d["name"] == "listings")
    assert ds["primary_key"] == ["listing", "active_from"]
    datus = next(
        json.loads(e["data"]) for e in ds["custom_extensions"] if e["vendor_name"] == "DATUS"
    )
    assert datus["validity"] == {"start": "active_from", "end": "active_to"}
    assert datus["requires"] == ["validity"] and datus["v"] == "1.15"
    (rel,) = model["semantic_model"][0]["relationships"]
    assert (rel["from"], rel["to"], rel["to_columns"]) == ("bookings", "listings", ["listing"])


def test_bookings_by_the_valid_capacity(model: dict[str, Any], project: Path) -> None:
    want = Counter(_capacity(b[1], b[2]) for b in BOOKINGS)
    rows = _engine(model, project).execute(
        {"metrics": ["bookings"], "group_by": ["listings.capacity"]}
    )["rows"]
    assert {r["capacity"]: r["bookings"] for r in rows} == dict(want)
    assert dict(want) == {2: 1, 6: 1, None: 2, 8: 1}


def test_export_writes_the_validity_params_back(model: dict[str, Any]) -> None:
    """dbt's own form again: the natural entity and `is_start` / `is_end` time dimensions."""
    sms = export_dbt(model).data["semantic_models"]
    sm = next(s for s in sms if s["name"] == "listings")
    assert {"name": "listing", "type": "natural", "expr": "listing_id"} in sm["entities"]
    params = {d["name"]: d.get("type_params", {}).get("validity_params") for d in sm["dimensions"]}
    assert params["active_from"] == {"is_start": True}
    assert params["active_to"] == {"is_end": True}
