"""A catalog -> a first model: one dataset per table, a row count per table, sums of the
measure-like columns, time axes from date columns, keys and relationships as declared.

The output is meant to be read and edited: every guess (which columns are measures, which
date is a table's primary time axis, keys inferred by `--match-ids`) is stated in a comment
next to it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlglot
from sqlglot import exp

from dosi.importers.common import (
    Converted,
    Notes,
    datus_entry,
    document_obj,
    field_obj,
    metric_obj,
    relationship_obj,
    safe_name,
)
from dosi.importers.yaml_writer import COMMENT
from dosi.scaffold.catalog import SCHEMALESS_ENGINES, Catalog, Table
from dosi.scaffold.types import TEMPORAL, measure_like, ossie_datatype

_PLAIN = re.compile(r"[a-z_][a-z0-9_]*")
#: Names that usually hold a table's business date, best first (the D-TIME guess).
_TIME_PREFERENCE = (
    "created", "order", "event", "transaction", "sale", "invoice", "booking", "start",
    "date", "_at", "ts", "time",
)  # fmt: skip


@dataclass(frozen=True)
class _Names:
    """Dataset and field names chosen for the catalog's tables and columns."""

    datasets: dict[tuple[str | None, str], str]  # table key -> dataset name
    fields: dict[tuple[tuple[str | None, str], str], str]  # (table key, column) -> field


def identifier_sql(name: str) -> str:
    """A column or table name as SQL: bare when it reads back as itself, else quoted."""
    if _PLAIN.fullmatch(name):
        try:
            parsed = sqlglot.parse_one(name)
        except sqlglot.errors.ParseError:
            parsed = None
        if isinstance(parsed, exp.Column) and parsed.name == name and not parsed.table:
            return name
    return exp.to_identifier(name, quoted=True).sql()


def source_sql(table: Table, engine: str) -> str:
    """The dataset source: `schema.table` (SQLite: the table alone)."""
    schemaless = engine in SCHEMALESS_ENGINES or not table.schema
    parts = [table.name] if schemaless else [table.schema, table.name]
    return ".".join(identifier_sql(p) for p in parts)


def _names(catalog: Catalog) -> _Names:
    """Dataset names are table names (`<schema>_<table>` when schemas share one)."""
    datasets: dict[tuple[str | None, str], str] = {}
    fields: dict[tuple[tuple[str | None, str], str], str] = {}
    counts = Counter(t.name for t in catalog.tables)
    for t in catalog.tables:
        base = t.name if counts[t.name] == 1 or not t.schema else f"{t.schema}_{t.name}"
        datasets[t.key] = safe_name(base, datasets.values())
        taken: list[str] = []
        for c in t.columns:
            name = safe_name(c.name, taken)
            taken.append(name)
            fields[(t.key, c.name)] = name
    return _Names(datasets, fields)


def _primary_time(table: Table, temporal: Sequence[str]) -> str | None:
    """The D-TIME guess among several date columns: the first whose name reads like the
    table's business date, else the first date column."""
    if len(temporal) < 2:
        return None
    lowered = [c.lower() for c in temporal]
    for word in _TIME_PREFERENCE:
        for col, low in zip(temporal, lowered, strict=True):
            if word in low:
                return col
    return temporal[0]


def _dataset(table: Table, catalog: Catalog, names: _Names) -> dict[str, Any]:
    ds_name = names.datasets[table.key]
    key_cols = set(table.primary_key) | {c for fk in table.foreign_keys for c in fk.columns}
    fields = []
    temporal: list[str] = []
    for col in table.columns:
        fname = names.fields[(table.key, col.name)]
        datatype = ossie_datatype(col.raw_type)
        datus: dict[str, Any] = {}
        comment = None
        if datatype in TEMPORAL:
            temporal.append(fname)
            if datatype == "Date":
                datus["time_granularity"] = "day"
        if col.name not in key_cols and measure_like(col.name, datatype):
            datus["is_dimension"] = False
            comment = "a measure column: summed by a metric below, not offered as a dimension"
        if datatype == "Opaque":
            comment = f"database type {col.raw_type}: outside Ossie's portable types"
        fields.append(
            field_obj(
                fname,
                identifier_sql(col.name),
                datatype=datatype,
                datus=datus or None,
                comment=comment,
            )
        )
    kind = "view" if table.is_view else "table"
    obj: dict[str, Any] = {
        COMMENT: f"{kind} {table.schema + '.' if table.schema else ''}{table.name}",
        "name": ds_name,
        "source": source_sql(table, catalog.engine),
    }
    if table.primary_key:
        obj["primary_key"] = [names.fields[(table.key, c)] for c in table.primary_key]
        if table.pk_inferred:
            obj[COMMENT] += (
                f"; primary key {', '.join(table.primary_key)} inferred from unique, non-null "
                "values (not declared)"
            )
    if table.unique_keys:
        obj["unique_keys"] = [[names.fields[(table.key, c)] for c in k] for k in table.unique_keys]
    obj["description"] = f"{kind.capitalize()} {table.name} ({len(table.columns)} columns)."
    primary = _primary_time(table, temporal)
    if primary is not None:
        obj["custom_extensions"] = [datus_entry({"time_dimension": primary})]
        obj[COMMENT] += f"; primary time axis {primary} (a guess among {', '.join(temporal)})"
    obj["fields"] = fields
    return obj


def _metrics(table: Table, names: _Names, taken: list[str]) -> list[dict[str, Any]]:
    ds = names.datasets[table.key]

    def unique(name: str) -> str:
        out = safe_name(name, taken)
        taken.append(out)
        return out

    out = [
        metric_obj(
            unique(f"{ds}_count"),
            "COUNT(*)",
            datatype="Integer",
            description=f"Number of rows in {table.name}.",
            datus={"dataset": ds},
        )
    ]
    keys = set(table.primary_key) | {c for fk in table.foreign_keys for c in fk.columns}
    for col in table.columns:
        datatype = ossie_datatype(col.raw_type)
        if col.name in keys or not measure_like(col.name, datatype):
            continue
        fname = names.fields[(table.key, col.name)]
        out.append(
            metric_obj(
                unique(f"{ds}_{fname}_sum"),
                f"SUM({ds}.{fname})",
                datatype="Integer" if datatype == "Integer" else datatype,
                description=f"Sum of {table.name}.{col.name}.",
            )
        )
    return out


def _relationships(catalog: Catalog, names: _Names, notes: Notes) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    taken: list[str] = []
    for t in catalog.tables:
        for fk in t.foreign_keys:
            target = catalog.table(fk.ref_table, fk.ref_schema) or catalog.table(fk.ref_table)
            if target is None:
                notes.warn(
                    "init_relationship_outside_scope",
                    f"{t.name}({', '.join(fk.columns)}) references {fk.ref_table}, which is not "
                    "scaffolded; no relationship written",
                    path=t.name,
                    hint=f"add {fk.ref_table} to --tables to join it",
                )
                continue
            frm, to = names.datasets[t.key], names.datasets[target.key]
            base = f"{frm}_to_{to}"
            if any(r["name"].startswith(base) for r in out):
                base = f"{frm}_{'_'.join(names.fields[(t.key, c)] for c in fk.columns)}_to_{to}"
            name = safe_name(base, taken)
            taken.append(name)
            out.append(
                relationship_obj(
                    name,
                    frm,
                    to,
                    [names.fields[(t.key, c)] for c in fk.columns],
                    [names.fields[(target.key, c)] for c in fk.ref_columns],
                    comment="inferred from matching column names (--match-ids)"
                    if fk.inferred
                    else "declared foreign key",
                )
            )
    return out


def build_model(catalog: Catalog, name: str | None = None) -> Converted:
    """The scaffolded model of `catalog` (warnings for what could not be carried)."""
    notes = Notes()
    names = _names(catalog)
    datasets = [_dataset(t, catalog, names) for t in catalog.tables]
    taken: list[str] = []
    metrics = [m for t in catalog.tables for m in _metrics(t, names, taken)]
    relationships = _relationships(catalog, names, notes)
    model_name = safe_name(name or catalog.schema or catalog.engine)
    where = f" schema {catalog.schema}" if catalog.schema else ""
    doc = document_obj(
        model_name,
        datasets,
        relationships,
        metrics,
        description=f"Scaffolded by dosi init from the {catalog.engine}{where} catalog.",
    )
    first = metrics[0]["name"] if metrics else None
    header = [
        f"Scaffolded by `dosi init` from the {catalog.engine}{where} catalog: one dataset per",
        "table, a row count per table, sums of measure-like columns, time axes from date",
        "columns, keys and relationships as the database declares them.",
        "Review the guesses marked in comments (measures, primary time axes, inferred keys).",
    ]
    if first:
        header += ["", f"First query: dosi query -m <this file> --db <database> -M {first}"]
    return Converted(doc, tuple(notes.items), tuple(header))
