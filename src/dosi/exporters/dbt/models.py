"""Semantic models for `dosi export dbt`: datasets, their entities, dimensions and measures.

Entities come from keys, relationships (the target key names the entity on both sides, as dbt
joins by entity name) and the entity blocks an import from dbt kept; a measure is registered
once per (dataset, aggregation, expression, time axis) as the metrics ask for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlglot
from sqlglot import exp

from dosi.exporters.dbt.forms import (
    AGGS,
    DATUS,
    DBT,
    READ,
    ansi_expression,
    dbt_name,
    vendor_payload,
)
from dosi.importers.common import Notes


@dataclass
class Measure:
    name: str
    dataset: str
    agg: str
    expr: str
    agg_time: str | None = None
    agg_params: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class ModelWriter:
    """The datasets' half of the export; MetricWriter adds the metrics."""

    def __init__(self, model: Mapping[str, Any]) -> None:
        self.model = model
        self.notes = Notes()
        self.datasets = {d["name"]: d for d in model.get("datasets") or ()}
        self.metrics = {m["name"]: m for m in model.get("metrics") or ()}
        self.entities: dict[str, dict[str, dict[str, Any]]] = {}  # dataset -> field -> entity
        self.measures: dict[tuple[str, ...], Measure] = {}  # by name: every measure
        self.measure_index: dict[tuple[str, str, str, str | None], Measure] = {}
        self.measure_names: set[str] = set()
        self.out_metrics: dict[str, dict[str, Any]] = {}
        self.skipped: set[str] = set()

    def _dbt_measures(self) -> None:
        """Measures an import from dbt kept on its fields (`DBT` blocks), written back as
        they were, so replayed metrics find them."""
        for ds, d in self.datasets.items():
            for f in d.get("fields") or ():
                dbt = vendor_payload(f, DBT)
                if dbt.get("element") != "measure":
                    continue
                m = Measure(
                    str(dbt.get("name") or f["name"]),
                    ds,
                    str(dbt["agg"]),
                    str(dbt.get("expr") or dbt.get("name") or f["name"]),
                    agg_time=dbt.get("agg_time_dimension"),
                    agg_params=dbt.get("agg_params"),
                )
                m.extra = {k: dbt[k] for k in ("non_additive_dimension",) if dbt.get(k)}
                self.measures[(m.name,)] = m
                self.measure_index.setdefault((ds, m.agg, m.expr, m.agg_time), m)
                self.measure_names.add(m.name)

    def _primary(self, ds: str) -> str:
        """The entity a dataset's own dimensions are named by (`booking__is_instant`)."""
        ents = self.entities.get(ds, {})
        primary = next(
            (e["name"] for e in ents.values() if e["type"] in ("primary", "natural")), None
        )
        return primary or str(vendor_payload(self.datasets[ds], DBT).get("primary_entity") or ds)

    def _field(self, ds: str, name: str) -> Mapping[str, Any] | None:
        for f in self.datasets[ds].get("fields") or ():
            if f["name"] == name:
                return f
        return None

    def _column_sql(self, ds: str, column: str) -> str:
        f = self._field(ds, column)
        return ansi_expression(f) if f is not None else column

    def _entity_name(self, ds: str, column: str) -> str:
        f = self._field(ds, column)
        dbt = vendor_payload(f, DBT) if f is not None else {}
        return str(dbt.get("name") or column) if dbt.get("element") == "entity" else column

    def _entities(self) -> None:
        for name, d in self.datasets.items():
            ents: dict[str, dict[str, Any]] = {}
            for f in d.get("fields") or ():  # entities an import from dbt recorded
                dbt = vendor_payload(f, DBT)
                if dbt.get("element") == "entity" and dbt.get("type"):
                    ents[f["name"]] = {
                        "name": str(dbt.get("name") or f["name"]),
                        "type": str(dbt["type"]),
                    }
            pk = d.get("primary_key") or []
            start = (vendor_payload(d, DATUS).get("validity") or {}).get("start")
            if len(pk) == 2 and pk[1] == start and ents.get(pk[0], {}).get("type") == "natural":
                pk = pk[:1]  # D-VALIDITY: the natural key with the version start
            if len(pk) == 1 and ents.get(pk[0], {}).get("type") not in ("primary", "natural"):
                ents[pk[0]] = {"name": self._entity_name(name, pk[0]), "type": "primary"}
            elif pk:
                self.notes.warn(
                    "composite_key_not_exported",
                    f"dataset `{name}` has the "
                    f"composite primary key {pk}; dbt entities are one expression",
                    path=f"datasets[{name}]",
                )
            for uk in d.get("unique_keys") or ():
                if len(uk) == 1 and uk[0] not in ents:
                    ents[uk[0]] = {"name": self._entity_name(name, uk[0]), "type": "unique"}
            self.entities[name] = ents
        for r in self.model.get("relationships") or ():
            if vendor_payload(r, DATUS).get("cardinality") == "many_to_many":
                self.notes.warn(
                    "conformed_edge_not_exported",
                    f"relationship `{r['name']}` pairs two facts (D-CONFORM); dbt has no such edge",
                    path=f"relationships[{r['name']}]",
                )
                continue
            fc, tc = r.get("from_columns") or [], r.get("to_columns") or []
            # a dbt import's partition pairs follow the entity: dbt rebuilds them from the
            # `is_partition` dimensions, so the entity alone is exported
            parts = len(vendor_payload(r, DBT).get("partitions") or ())
            if parts and len(fc) == len(tc) == parts + 1:
                fc, tc = fc[:1], tc[:1]
            if len(fc) != 1 or len(tc) != 1 or r["to"] not in self.entities:
                self.notes.warn(
                    "composite_key_not_exported",
                    f"relationship `{r['name']}` "
                    "joins on several columns; dbt entities are one expression",
                    path=f"relationships[{r['name']}]",
                )
                continue
            target = self.entities[r["to"]].get(tc[0])
            if target is None:
                target = {"name": self._entity_name(r["to"], tc[0]), "type": "unique"}
                self.entities[r["to"]][tc[0]] = target
            own = self.entities[r["from"]]
            if fc[0] in own:
                if own[fc[0]]["name"] != target["name"]:
                    self.notes.warn(
                        "entity_name_clash",
                        f"relationship `{r['name']}`: column "
                        f"`{fc[0]}` of `{r['from']}` is already the entity "
                        f"`{own[fc[0]]['name']}`",
                        path=f"relationships[{r['name']}]",
                    )
                continue
            own[fc[0]] = {"name": target["name"], "type": "foreign"}

    def _semantic_model(self, d: Mapping[str, Any]) -> dict[str, Any] | None:
        name = d["name"]
        source = str(d.get("source") or "")
        if not source or any(c.isspace() for c in source.strip()):
            self.notes.warn(
                "sql_source_not_exported",
                f"dataset `{name}` reads a SQL query; a dbt semantic model reads a model (`ref`)",
                path=f"datasets[{name}]",
            )
            return None
        table = source.strip().split(".")[-1].strip('"`')
        sm: dict[str, Any] = {"name": name}
        if d.get("description"):
            sm["description"] = d["description"]
        sm["model"] = f"ref('{table}')"
        time_field = vendor_payload(d, DATUS).get("time_dimension")
        fields = list(d.get("fields") or ())
        times = [f for f in fields if (f.get("dimension") or {}).get("is_time")]
        has_measures = any(m.dataset == name for m in self.measures.values())
        if time_field is None and len(times) == 1 and has_measures:
            time_field = times[0]["name"]  # dbt needs an agg time dimension for measures
        if time_field:
            sm["defaults"] = {"agg_time_dimension": time_field}
        ents = self.entities.get(name, {})
        entities = []
        for col, e in ents.items():
            out = {"name": e["name"], "type": e["type"]}
            sql = self._column_sql(name, col)
            if sql != e["name"]:
                out["expr"] = sql
            entities.append(out)
        if not any(e["type"] in ("primary", "natural") for e in ents.values()):
            sm["primary_entity"] = self._primary(name)
        if entities:
            sm["entities"] = entities
        dims = []
        validity = vendor_payload(d, DATUS).get("validity") or {}
        bounds = {validity.get("start"): "is_start", validity.get("end"): "is_end"}
        for f in fields:
            if f["name"] in ents:
                continue
            datus = vendor_payload(f, DATUS)
            if "lod" in datus:
                self.notes.warn(
                    "lod_not_exported",
                    f"field `{name}.{f['name']}` is a D-LOD "
                    "fixed field; dbt has no level-of-detail dimension",
                    path=f"datasets[{name}].fields[{f['name']}]",
                )
                continue
            if datus.get("is_dimension") is False:
                continue
            dim: dict[str, Any] = {"name": f["name"]}
            if f.get("description"):
                dim["description"] = f["description"]
            if f.get("label"):
                dim["label"] = f["label"]
            is_time = (f.get("dimension") or {}).get("is_time")
            dim["type"] = "time" if is_time else "categorical"
            sql = ansi_expression(f)
            if sql != f["name"] or "expr" in vendor_payload(f, DBT):
                dim["expr"] = sql
            if is_time:
                grain = (
                    datus.get("time_granularity")
                    or (datus.get("time") or {}).get("granularity")
                    or vendor_payload(f, DBT).get("time_granularity")
                    or "day"
                )
                dim["type_params"] = {"time_granularity": grain}
                if f["name"] in bounds:  # D-VALIDITY: MetricFlow's version bounds
                    dim["type_params"]["validity_params"] = {bounds[f["name"]]: True}
            if vendor_payload(f, DBT).get("is_partition"):
                dim["is_partition"] = True
            dims.append(dim)
        if dims:
            sm["dimensions"] = dims
        measures = []
        for m in self.measures.values():
            if m.dataset != name:
                continue
            out = {"name": m.name, "agg": m.agg}
            if m.expr != m.name or m.agg == "count":  # dbt's COUNT needs an explicit expr
                out["expr"] = m.expr
            if m.agg_params:
                out["agg_params"] = m.agg_params
            if m.agg_time and m.agg_time != time_field:
                out["agg_time_dimension"] = m.agg_time
            out.update(m.extra)
            measures.append(out)
        if measures:
            sm["measures"] = measures
        return sm

    # -- metrics --------------------------------------------------------------------------------
    def _skip(self, name: str, code: str, why: str) -> None:
        self.skipped.add(name)
        self.notes.warn(code, f"metric `{name}` is not exported: {why}", path=f"metrics[{name}]")

    def _aggregate(
        self, name: str, sql: str, time_dim: str | None, pin: str | None
    ) -> tuple[Measure, str | None] | None:
        try:
            tree = sqlglot.parse_one(sql, read=READ)
        except sqlglot.errors.ParseError:
            self._skip(name, "not_exportable", f"its expression `{sql}` is not SQL dosi reads")
            return None
        while isinstance(tree, exp.Paren):
            tree = tree.this
        if not isinstance(tree, exp.AggFunc) or any(
            isinstance(n, exp.AggFunc) for n in tree.this.walk() if n is not tree
        ):
            self._skip(name, "not_exportable", f"`{sql}` is not a single aggregate")
            return None
        arg = tree.this
        distinct = isinstance(arg, exp.Distinct)
        if distinct:
            arg = arg.expressions[0]
        if isinstance(tree, exp.Count):
            agg = "count_distinct" if distinct else "count"
        else:
            agg = AGGS.get(type(tree))  # type: ignore[assignment]
            if agg is None:
                self._skip(name, "not_exportable", f"dbt has no aggregation like `{sql}`")
                return None
        filt = None
        if (
            isinstance(arg, exp.Case)
            and len(arg.args.get("ifs") or []) == 1
            and not arg.args.get("default")
        ):
            cond = arg.args["ifs"][0]
            arg, pred = cond.args["true"], cond.this
            datasets = {c.table for c in arg.find_all(exp.Column) if c.table}
            if not datasets and pin is None:  # COUNT(CASE WHEN p THEN 1 END): p's dataset
                pin = next((c.table for c in pred.find_all(exp.Column) if c.table), None)
            home = next(iter(sorted(datasets)), pin)
            if home is None:
                self._skip(name, "not_exportable", f"cannot tell the dataset of `{sql}`")
                return None
            filt = self._jinja(home, pred.sql(dialect=READ))
            if agg == "count" and isinstance(arg, exp.Literal):
                agg = "count"
        datasets = {c.table for c in arg.find_all(exp.Column) if c.table}
        if len(datasets) > 1 or (not datasets and pin is None):
            self._skip(name, "not_exportable", f"`{sql}` reads several datasets")
            return None
        ds = next(iter(datasets)) if datasets else str(pin)
        if ds not in self.datasets:
            self._skip(name, "not_exportable", f"`{sql}` reads the unknown dataset `{ds}`")
            return None
        if (
            not time_dim
            and not vendor_payload(self.datasets[ds], DATUS).get("time_dimension")
            and not any(
                (f.get("dimension") or {}).get("is_time")
                for f in self.datasets[ds].get("fields") or ()
            )
        ):
            self._skip(
                name,
                "no_agg_time_dimension",
                f"dataset `{ds}` has no time field, and "
                "dbt needs an aggregation time dimension for every measure",
            )
            return None
        field_name = arg.name if isinstance(arg, exp.Column) else None
        row = self._row_sql(ds, arg)
        dbt = (
            vendor_payload(self._field(ds, field_name), DBT)
            if field_name and self._field(ds, field_name)
            else {}
        )
        agg_params = None
        if dbt.get("element") == "measure" and dbt.get("agg") in ("sum_boolean",) and agg == "sum":
            agg, row = "sum_boolean", str(dbt.get("expr") or field_name)
        if agg == "median":
            agg, agg_params = "percentile", {"percentile": 0.5}
        agg_time = str(time_dim).split(".")[-1] if time_dim else None
        key = (ds, agg, row, agg_time)
        hit = self.measure_index.get(key)
        if hit is None:
            measure_field = (
                field_name
                and vendor_payload(self._field(ds, field_name) or {}, DATUS).get("is_dimension")
                is False
            )
            preferred = (
                field_name
                if measure_field and field_name not in self.measure_names
                else dbt_name(name)
            )
            mname = preferred
            n = 2
            while mname in self.measure_names:
                mname, n = f"{preferred}_{n}", n + 1
            hit = Measure(mname, ds, agg, row, agg_time=agg_time, agg_params=agg_params)
            self.measures[(mname,)] = hit
            self.measure_index[key] = hit
            self.measure_names.add(mname)
        return hit, filt

    def _row_sql(self, ds: str, arg: exp.Expression) -> str:
        def sub(n: exp.Expression) -> exp.Expression:
            if isinstance(n, exp.Column) and n.table == ds:
                return exp.Paren(this=sqlglot.parse_one(self._column_sql(ds, n.name), read=READ))
            return n

        if isinstance(arg, exp.Column) and arg.table == ds:
            return self._column_sql(ds, arg.name)
        return arg.transform(sub).sql(dialect=READ)

    def _jinja(self, home: str, pred: str) -> str:
        """A SQL predicate over `dataset.field` as a dbt filter (`{{ Dimension('e__f') }}`)."""
        tree = sqlglot.parse_one(pred, read=READ)

        def sub(n: exp.Expression) -> exp.Expression:
            if not isinstance(n, exp.Column):
                return n
            ds = n.table or home
            return exp.column(self._dbt_ref(ds, n.name))

        text = tree.transform(sub).sql(dialect=READ)
        return text.replace('"{{', "{{").replace('}}"', "}}")

    def _dbt_ref(self, ds: str, fname: str) -> str:
        ents = self.entities.get(ds, {})
        if fname in ents:
            return "{{ Entity('" + ents[fname]["name"] + "') }}"
        primary = self._primary(ds)
        f = self._field(ds, fname)
        if f is not None and (f.get("dimension") or {}).get("is_time"):
            return "{{ TimeDimension('" + f"{primary}__{fname}" + "') }}"
        return "{{ Dimension('" + f"{primary}__{fname}" + "') }}"
