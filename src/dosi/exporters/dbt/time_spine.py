"""The model's calendar table (DATUS `calendar.table`, issue 22 item 6) as a dbt time spine.

A calendar dataset is the day time spine of a dbt project, and its grains are the spine's
custom granularities: it is written as a dbt-core `models:` entry with a `time_spine` block
(`standard_granularity_column`, `custom_granularities`), not as a semantic model.
`dosi import dbt` reads that block back into the project's time spine, so a model imported
from MetricFlow keeps its custom granularities through an export.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlglot
from sqlglot import exp

from dosi.exporters.dbt.forms import vendor_payload

DATUS = "DATUS"


def calendar_dataset(model: Mapping[str, Any]) -> str | None:
    """The name of the dataset the model's DATUS calendar names as its calendar table."""
    table = (vendor_payload(model, DATUS).get("calendar") or {}).get("table")
    if isinstance(table, Mapping) and isinstance(table.get("dataset"), str):
        return table["dataset"]
    return None


def time_spine_model(model: Mapping[str, Any], ds: Mapping[str, Any]) -> dict[str, Any]:
    """The dbt-core `models:` entry declaring dataset `ds` as the day time spine."""
    table = (vendor_payload(model, DATUS).get("calendar") or {}).get("table") or {}
    fields = {f["name"]: f for f in ds.get("fields") or ()}
    date_field = str(table.get("date"))
    date_col = _column(fields.get(date_field), date_field)
    grains = table.get("grains") or {}
    if isinstance(grains, list):
        grains = {g: g for g in grains}
    custom = [
        {"name": grain, "column_name": _column(fields.get(str(f)), str(f))}
        for grain, f in grains.items()
    ]
    source = str(ds.get("source") or ds["name"])
    out: dict[str, Any] = {
        "name": source.strip().split(".")[-1].strip('"`'),
        "time_spine": {"standard_granularity_column": date_col, "custom_granularities": custom},
        "columns": [{"name": date_col, "granularity": "day"}],
    }
    return out


def _column(f: Mapping[str, Any] | None, default: str) -> str:
    """The table column a field reads (through a CAST), else its own name."""
    if f is None:
        return default
    dialects = (f.get("expression") or {}).get("dialects") or ()
    sql = next((d.get("expression") for d in dialects if d.get("expression")), None)
    if not sql:
        return default
    try:
        tree = sqlglot.parse_one(str(sql))
    except sqlglot.errors.ParseError:
        return default
    while isinstance(tree, exp.Cast):
        tree = tree.this
    return tree.name if isinstance(tree, exp.Column) else default
