"""`dosi export dbt`: an Ossie model (with DATUS payloads) as dbt semantic-layer YAML.

The inverse of the import, for what maps: each dataset is a semantic model (`model:
ref('<table>')`); its primary key, unique keys and relationship columns are entities (the
relationship's target key names the entity on both sides, as dbt joins by entity name);
`is_time` fields are time dimensions (granularity from D-GRAIN), other dimension fields are
categorical; every single-aggregate metric becomes a measure plus a simple metric (a CASE
filter or a D-DERIVE filter becomes the metric's Jinja `filter`); D-DERIVE compose is a ratio
(`a / b`) or a derived metric; D-WINDOW cumulative (with `reset`) is a cumulative metric
(`grain_to_date`), an offset is a derived metric over an `offset_window` input. What has no
dbt form (rank and value windows, D-LOD, composite keys, SQL sources) is a structured warning
and is left out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlglot
import yaml
from sqlglot import exp

from dosi.errors import OsiError
from dosi.importers.common import Notes

DBT = "DBT"
DATUS = "DATUS"
_READ = "duckdb"
_AGGS = {exp.Sum: "sum", exp.Avg: "average", exp.Min: "min", exp.Max: "max", exp.Median: "median"}


class ExportError(OsiError):
    """The document cannot be exported at all (code `invalid_model`)."""

    kind = "export_error"


@dataclass
class Exported:
    """dbt project YAML (semantic_models, metrics, saved_queries) and what did not map."""

    data: dict[str, Any]
    warnings: list[Any] = field(default_factory=list)

    def yaml(self) -> str:
        return yaml.safe_dump(self.data, sort_keys=False, allow_unicode=True, width=100)


def export_dbt(document: Mapping[str, Any]) -> Exported:
    """The first semantic model of an Ossie document as dbt semantic-layer YAML."""
    models = document.get("semantic_model") or []
    if not models or not isinstance(models[0], Mapping):
        raise ExportError("invalid_model", "the document holds no semantic_model")
    return _Exporter(models[0]).run()


def _ext(obj: Mapping[str, Any], vendor: str) -> dict[str, Any]:
    for e in obj.get("custom_extensions") or ():
        if str(e.get("vendor_name", "")).upper() == vendor:
            try:
                data = json.loads(e.get("data") or "{}")
            except ValueError:
                return {}
            return data if isinstance(data, dict) else {}
    return {}


def _expr(obj: Mapping[str, Any]) -> str:
    dialects = (obj.get("expression") or {}).get("dialects") or []
    for d in dialects:
        if d.get("dialect") == "ANSI_SQL":
            return str(d.get("expression"))
    return str(dialects[0].get("expression")) if dialects else ""


@dataclass
class _Measure:
    name: str
    dataset: str
    agg: str
    expr: str
    agg_time: str | None = None
    agg_params: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class _Exporter:
    def __init__(self, model: Mapping[str, Any]) -> None:
        self.model = model
        self.notes = Notes()
        self.datasets = {d["name"]: d for d in model.get("datasets") or ()}
        self.metrics = {m["name"]: m for m in model.get("metrics") or ()}
        self.entities: dict[str, dict[str, dict[str, Any]]] = {}  # dataset -> field -> entity
        self.measures: dict[tuple[str, ...], _Measure] = {}  # by name: every measure
        self.measure_index: dict[tuple[str, str, str, str | None], _Measure] = {}
        self.measure_names: set[str] = set()
        self.out_metrics: dict[str, dict[str, Any]] = {}
        self.skipped: set[str] = set()

    # -- datasets -------------------------------------------------------------------------------
    def run(self) -> Exported:
        self._entities()
        self._dbt_measures()
        for name, m in self.metrics.items():
            if not _ext(m, DBT).get("helper"):
                self._metric(name)
        sms = [sm for sm in (self._semantic_model(d) for d in self.datasets.values()) if sm]
        data: dict[str, Any] = {"semantic_models": sms}
        data["metrics"] = list(self.out_metrics.values())  # helpers before their users
        saved = _ext(self.model, DBT).get("saved_queries")
        if saved:
            self.notes.warn(
                "saved_queries_not_exported",
                f"{len(saved)} saved queries are kept as dosi queries only",
                path="semantic_model",
            )
        return Exported(data, list(self.notes.items))

    def _dbt_measures(self) -> None:
        """Measures an import from dbt kept on its fields (`DBT` blocks), written back as
        they were, so replayed metrics find them."""
        for ds, d in self.datasets.items():
            for f in d.get("fields") or ():
                dbt = _ext(f, DBT)
                if dbt.get("element") != "measure":
                    continue
                m = _Measure(
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
        return primary or str(_ext(self.datasets[ds], DBT).get("primary_entity") or ds)

    def _field(self, ds: str, name: str) -> Mapping[str, Any] | None:
        for f in self.datasets[ds].get("fields") or ():
            if f["name"] == name:
                return f
        return None

    def _column_sql(self, ds: str, column: str) -> str:
        f = self._field(ds, column)
        return _expr(f) if f is not None else column

    def _entity_name(self, ds: str, column: str) -> str:
        f = self._field(ds, column)
        dbt = _ext(f, DBT) if f is not None else {}
        return str(dbt.get("name") or column) if dbt.get("element") == "entity" else column

    def _entities(self) -> None:
        for name, d in self.datasets.items():
            ents: dict[str, dict[str, Any]] = {}
            for f in d.get("fields") or ():  # entities an import from dbt recorded
                dbt = _ext(f, DBT)
                if dbt.get("element") == "entity" and dbt.get("type"):
                    ents[f["name"]] = {
                        "name": str(dbt.get("name") or f["name"]),
                        "type": str(dbt["type"]),
                    }
            pk = d.get("primary_key") or []
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
            if _ext(r, DATUS).get("cardinality") == "many_to_many":
                self.notes.warn(
                    "conformed_edge_not_exported",
                    f"relationship `{r['name']}` pairs two facts (D-CONFORM); dbt has no such edge",
                    path=f"relationships[{r['name']}]",
                )
                continue
            fc, tc = r.get("from_columns") or [], r.get("to_columns") or []
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
        time_field = _ext(d, DATUS).get("time_dimension")
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
        for f in fields:
            if f["name"] in ents:
                continue
            datus = _ext(f, DATUS)
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
            sql = _expr(f)
            if sql != f["name"] or "expr" in _ext(f, DBT):
                dim["expr"] = sql
            if is_time:
                grain = (
                    datus.get("time_granularity")
                    or (datus.get("time") or {}).get("granularity")
                    or _ext(f, DBT).get("time_granularity")
                    or "day"
                )
                dim["type_params"] = {"time_granularity": grain}
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

    def _metric(self, name: str) -> bool:
        if name in self.out_metrics:
            return True
        if name in self.skipped or name not in self.metrics:
            return False
        m = self.metrics[name]
        datus = _ext(m, DATUS)
        replay = _ext(m, DBT).get("metric")
        if isinstance(replay, Mapping):  # imported from dbt: written back as it was
            self.out_metrics[name] = _dbt_yaml(replay)
            return True
        out: dict[str, Any] = {"name": _dbt_name(name)}
        if m.get("description"):
            out["description"] = m["description"]
        syn = (
            (m.get("ai_context") or {}).get("synonyms")
            if isinstance(m.get("ai_context"), Mapping)
            else None
        )
        if syn:
            out["label"] = syn[0]
        if "lod" in (datus.get("derive") or {}).get("type", "") or datus.get("params"):
            self._skip(name, "not_exportable", "D-LOD and D-PARAM metrics have no dbt form")
            return False
        window = datus.get("window")
        derive = datus.get("derive") or {}
        if window is not None:
            ok = self._window(name, m, window, out)
        elif derive.get("type") == "compose":
            ok = self._compose(name, derive, out)
        else:
            ok = self._simple(name, m, datus, out)
        if ok:
            self.out_metrics[name] = out
        return ok

    def _simple(
        self, name: str, m: Mapping[str, Any], datus: Mapping[str, Any], out: dict[str, Any]
    ) -> bool:
        parts = _aggregates(_expr(m))
        if parts is not None and (len(parts[1]) > 1 or parts[0] is not parts[1][0]):
            return self._expression(name, parts, datus, out)
        parsed = self._aggregate(name, _expr(m), datus.get("time_dimension"), datus.get("dataset"))
        if parsed is None:
            return False
        measure, filt = parsed
        derive = datus.get("derive") or {}
        if derive.get("type") == "filter":
            filt = self._jinja(measure.dataset, str(derive.get("where")))
        out["type"] = "simple"
        tp: dict[str, Any] = {"measure": measure.name}
        if datus.get("fill_nulls_with") is not None:
            tp = {"measure": {"name": measure.name, "fill_nulls_with": datus["fill_nulls_with"]}}
        out["type_params"] = tp
        if filt:
            out["filter"] = filt
        return True

    def _expression(
        self,
        name: str,
        parts: tuple[exp.Expression, list[exp.AggFunc]],
        datus: Mapping[str, Any],
        out: dict[str, Any],
    ) -> bool:
        """An expression over several aggregates: one simple metric per aggregate and a
        derived metric (a ratio for `a / b`) over them; divisions stay NULL on 0."""
        tree, aggs = parts
        names: dict[int, str] = {}
        base = {k: v for k, v in datus.items() if k in ("time_dimension", "dataset")}
        for i, agg in enumerate(aggs, 1):
            part = f"{_dbt_name(name)}_part{i}"
            part_out: dict[str, Any] = {
                "name": part,
                "description": f"Aggregate {i} of `{name}` (dosi export helper).",
            }
            if not self._simple(
                part,
                {
                    "expression": {
                        "dialects": [{"dialect": "ANSI_SQL", "expression": agg.sql(dialect=_READ)}]
                    }
                },
                base,
                part_out,
            ):
                self.skipped.discard(part)
                self._skip(name, "not_exportable", f"its aggregate `{agg.sql()}` has no dbt form")
                return False
            self.out_metrics[part] = part_out
            names[id(agg)] = part
        if isinstance(tree, exp.Div) and id(tree.this) in names and id(tree.expression) in names:
            out["type"] = "ratio"
            out["type_params"] = {
                "numerator": names[id(tree.this)],
                "denominator": names[id(tree.expression)],
            }
            return True

        def sub(n: exp.Expression) -> exp.Expression:
            if id(n) in names:
                return exp.column(names[id(n)])
            return n

        expr = tree.transform(sub, copy=False)
        for div in list(expr.find_all(exp.Div)):
            div.set(
                "expression",
                exp.Nullif(this=div.expression.copy(), expression=exp.Literal.number(0)),
            )
        out["type"] = "derived"
        out["type_params"] = {
            "expr": expr.sql(dialect=_READ),
            "metrics": [{"name": n} for n in names.values()],
        }
        return True

    def _aggregate(
        self, name: str, sql: str, time_dim: str | None, pin: str | None
    ) -> tuple[_Measure, str | None] | None:
        try:
            tree = sqlglot.parse_one(sql, read=_READ)
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
            agg = _AGGS.get(type(tree))  # type: ignore[assignment]
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
            filt = self._jinja(home, pred.sql(dialect=_READ))
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
            and not _ext(self.datasets[ds], DATUS).get("time_dimension")
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
            _ext(self._field(ds, field_name), DBT)
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
                and _ext(self._field(ds, field_name) or {}, DATUS).get("is_dimension") is False
            )
            preferred = (
                field_name
                if measure_field and field_name not in self.measure_names
                else _dbt_name(name)
            )
            mname = preferred
            n = 2
            while mname in self.measure_names:
                mname, n = f"{preferred}_{n}", n + 1
            hit = _Measure(mname, ds, agg, row, agg_time=agg_time, agg_params=agg_params)
            self.measures[(mname,)] = hit
            self.measure_index[key] = hit
            self.measure_names.add(mname)
        return hit, filt

    def _row_sql(self, ds: str, arg: exp.Expression) -> str:
        def sub(n: exp.Expression) -> exp.Expression:
            if isinstance(n, exp.Column) and n.table == ds:
                return exp.Paren(this=sqlglot.parse_one(self._column_sql(ds, n.name), read=_READ))
            return n

        if isinstance(arg, exp.Column) and arg.table == ds:
            return self._column_sql(ds, arg.name)
        return arg.transform(sub).sql(dialect=_READ)

    def _jinja(self, home: str, pred: str) -> str:
        """A SQL predicate over `dataset.field` as a dbt filter (`{{ Dimension('e__f') }}`)."""
        tree = sqlglot.parse_one(pred, read=_READ)

        def sub(n: exp.Expression) -> exp.Expression:
            if not isinstance(n, exp.Column):
                return n
            ds = n.table or home
            return exp.column(self._dbt_ref(ds, n.name))

        text = tree.transform(sub).sql(dialect=_READ)
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

    def _compose(self, name: str, derive: Mapping[str, Any], out: dict[str, Any]) -> bool:
        expr = str(derive.get("expr"))
        tree = sqlglot.parse_one(expr, read=_READ)
        members = list(dict.fromkeys(c.name for c in tree.find_all(exp.Column)))
        for mem in members:
            if not self._metric(mem):
                self._skip(name, "input_not_exported", f"its member `{mem}` is not exported")
                return False
        if derive.get("fill") is not None:
            self.notes.warn(
                "compose_fill_not_exported",
                f"metric `{name}` fills its members' "
                f"NULLs with {derive['fill']}; dbt fills per metric "
                "(fill_nulls_with)",
                path=f"metrics[{name}]",
            )
        if isinstance(tree, exp.Div) and all(
            isinstance(x, exp.Column) for x in (tree.this, tree.expression)
        ):
            out["type"] = "ratio"
            out["type_params"] = {
                "numerator": _dbt_name(tree.this.name),
                "denominator": _dbt_name(tree.expression.name),
            }
            return True

        def rename(n: exp.Expression) -> exp.Expression:
            return exp.column(_dbt_name(n.name)) if isinstance(n, exp.Column) else n

        out["type"] = "derived"
        out["type_params"] = {
            "expr": tree.transform(rename).sql(dialect=_READ),
            "metrics": [{"name": _dbt_name(n)} for n in members],
        }
        return True

    def _window(
        self, name: str, m: Mapping[str, Any], window: Mapping[str, Any], out: dict[str, Any]
    ) -> bool:
        base = window.get("base")
        if base is not None:
            if not self._metric(str(base)):
                self._skip(name, "input_not_exported", f"its base `{base}` is not exported")
                return False
            base_name = _dbt_name(str(base))
        else:
            base_name = f"{_dbt_name(name)}_base"
            if base_name not in self.out_metrics:
                helper = {"name": base_name, "expression": m["expression"]}
                helper_out: dict[str, Any] = {
                    "name": base_name,
                    "description": f"The base aggregate of `{name}` (dosi export helper).",
                }
                datus = {k: v for k, v in _ext(m, DATUS).items() if k == "time_dimension"}
                if not self._simple(base_name, helper, datus, helper_out):
                    return False
                self.out_metrics[base_name] = helper_out
        ok = self._window_kind(name, m, window, base_name, out)
        if not ok and base is None and base_name in self.out_metrics:
            del self.out_metrics[base_name]  # the helper base of a window that has no dbt form
        return ok

    def _window_kind(
        self,
        name: str,
        m: Mapping[str, Any],
        window: Mapping[str, Any],
        base_name: str,
        out: dict[str, Any],
    ) -> bool:
        kind = window.get("type")
        if kind == "cumulative" and window.get("function", "sum") == "sum":
            measure = self.out_metrics[base_name]
            mt = measure.get("type_params", {}).get("measure")
            if measure.get("type") != "simple" or measure.get("filter"):
                self._skip(
                    name,
                    "not_exportable",
                    "a cumulative over a derived or filtered base has no dbt measure to accumulate",
                )
                return False
            out["type"] = "cumulative"
            ctp: dict[str, Any] = {"period_agg": "last"}
            if window.get("reset"):
                ctp["grain_to_date"] = window["reset"]
            out["type_params"] = {"measure": mt, "cumulative_type_params": ctp}
            return True
        offset = window.get("offset")
        if kind == "pop" or offset is not None:
            if isinstance(offset, str):
                count, _, grain = offset.partition(" ")
                offset = {"count": int(count), "granularity": grain.rstrip("s")}
            if not isinstance(offset, Mapping) or offset.get("direction") == "forward":
                self._skip(name, "not_exportable", "a forward offset has no dbt form")
                return False
            calc = window.get("calculation") or ("percent_change" if kind == "pop" else "value")
            prev = f"{base_name}_prev"
            expr = {
                "value": prev,
                "delta": f"{base_name} - {prev}",
                "percent_change": f"({base_name} - {prev}) / NULLIF({prev}, 0)",
                "ratio": f"{base_name} / NULLIF({prev}, 0)",
            }.get(str(calc))
            if expr is None:
                self._skip(name, "not_exportable", f"offset calculation `{calc}`")
                return False
            inputs: list[dict[str, Any]] = [
                {
                    "name": base_name,
                    "alias": prev,
                    "offset_window": f"{offset['count']} {offset['granularity']}",
                }
            ]
            if calc != "value":
                inputs.insert(0, {"name": base_name})
            out["type"] = "derived"
            out["type_params"] = {"expr": expr, "metrics": inputs}
            return True
        dbt = _ext(m, DBT).get("metric")
        if kind == "rolling" and dbt and dbt.get("type") == "cumulative":
            out["type"] = "cumulative"
            out["type_params"] = _windows_as_text(
                {
                    k: v
                    for k, v in (dbt.get("type_params") or {}).items()
                    if k in ("measure", "cumulative_type_params", "window")
                }
            )
            return True
        self._skip(name, "not_exportable", f"the D-WINDOW {json.dumps(window)} has no dbt form")
        return False


def _windows_as_text(value: Any) -> Any:
    """dbt's parsed windows (`{count, granularity}`) back in the YAML spelling (`2 month`)."""
    if isinstance(value, Mapping):
        if set(value) == {"count", "granularity"}:
            return f"{value['count']} {value['granularity']}"
        return {k: _windows_as_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_windows_as_text(v) for v in value]
    return value


def _dbt_name(name: str) -> str:
    """dbt names forbid `__` (its entity-path separator)."""
    while "__" in name:
        name = name.replace("__", "_")
    return name


def _dbt_yaml(metric: Mapping[str, Any]) -> dict[str, Any]:
    """A metric parsed by dbt-semantic-interfaces in dbt's YAML spelling: windows as text,
    filters as template lists, no parser-only keys."""
    out = _windows_as_text(_filters_as_text(dict(metric)))
    tp = out.get("type_params") or {}
    ctp = tp.get("cumulative_type_params")
    if isinstance(ctp, dict):
        ctp.pop("metric", None)
    for k in ("input_measures", "metric_aggregation_params"):
        tp.pop(k, None)
    if tp.get("join_to_timespine") is False:
        tp.pop("join_to_timespine")
    if tp.get("is_private") is False:
        tp.pop("is_private")
    return out


def _filters_as_text(value: Any) -> Any:
    if isinstance(value, Mapping):
        if set(value) == {"where_filters"}:
            return [w["where_sql_template"] for w in value["where_filters"]]
        return {k: _filters_as_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_filters_as_text(v) for v in value]
    return value


def _aggregates(sql: str) -> tuple[exp.Expression, list[exp.AggFunc]] | None:
    """The expression and its outermost aggregate calls (None: not SQL)."""
    try:
        tree = sqlglot.parse_one(sql, read=_READ)
    except sqlglot.errors.ParseError:
        return None
    while isinstance(tree, exp.Paren):
        tree = tree.this
    aggs = [
        n
        for n in tree.walk()
        if isinstance(n, exp.AggFunc) and not any(isinstance(p, exp.AggFunc) for p in _parents(n))
    ]
    return (tree, aggs) if aggs else None


def _parents(node: exp.Expression) -> list[exp.Expression]:
    out = []
    p = node.parent
    while p is not None:
        out.append(p)
        p = p.parent
    return out
