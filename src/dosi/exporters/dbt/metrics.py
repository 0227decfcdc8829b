"""Metrics for `dosi export dbt`: simple (with Jinja filters), ratio, derived, cumulative.

An imported dbt metric is written back as it was (its `DBT` block); any other metric is
derived from its Ossie expression and DATUS payloads: a single aggregate is a measure plus a
simple metric, several aggregates a ratio or derived metric over one simple metric each, a
D-DERIVE compose a ratio (`a / b`) or derived metric, D-WINDOW cumulative a cumulative metric
(`reset` as `grain_to_date`) and an offset a derived metric over an `offset_window` input.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import sqlglot
from sqlglot import exp

from dosi.exporters.dbt.forms import (
    DATUS,
    DBT,
    READ,
    aggregates,
    ansi_expression,
    dbt_name,
    dbt_yaml,
    vendor_payload,
    windows_as_text,
)
from dosi.exporters.dbt.models import ModelWriter
from dosi.exporters.dbt.spine import project_configuration, spine_dataset
from dosi.exporters.dbt.time_spine import calendar_dataset, time_spine_model


class MetricWriter(ModelWriter):
    """The whole export: datasets (ModelWriter) and metrics."""

    # -- datasets -------------------------------------------------------------------------------
    def run(self) -> tuple[dict[str, Any], list[Any]]:
        self._entities()
        self._dbt_measures()
        for name, m in self.metrics.items():
            if not vendor_payload(m, DBT).get("helper"):
                self._metric(name)
        calendar = calendar_dataset(self.model)
        # the calendar (or the spine) is written as the project's time spine instead
        spine = calendar or spine_dataset(self.model)
        sms = [
            sm
            for sm in (self._semantic_model(d) for n, d in self.datasets.items() if n != spine)
            if sm
        ]
        data: dict[str, Any] = {"semantic_models": sms}
        if calendar is not None and calendar in self.datasets:
            data["models"] = [time_spine_model(self.model, self.datasets[calendar])]
        else:
            project = project_configuration(self.model)
            if project is not None:
                data["project_configuration"] = project
        data["metrics"] = list(self.out_metrics.values())  # helpers before their users
        saved = vendor_payload(self.model, DBT).get("saved_queries")
        if saved:
            self.notes.warn(
                "saved_queries_not_exported",
                f"{len(saved)} saved queries are kept as dosi queries only",
                path="semantic_model",
            )
        return data, list(self.notes.items)

    def _metric(self, name: str) -> bool:
        if name in self.out_metrics:
            return True
        if name in self.skipped or name not in self.metrics:
            return False
        m = self.metrics[name]
        datus = vendor_payload(m, DATUS)
        replay = vendor_payload(m, DBT).get("metric")
        if isinstance(replay, Mapping):  # imported from dbt: written back as it was
            self.out_metrics[name] = dbt_yaml(replay)
            return True
        out: dict[str, Any] = {"name": dbt_name(name)}
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
        parts = aggregates(ansi_expression(m))
        if parts is not None and (len(parts[1]) > 1 or parts[0] is not parts[1][0]):
            return self._expression(name, parts, datus, out)
        parsed = self._aggregate(
            name, ansi_expression(m), datus.get("time_dimension"), datus.get("dataset")
        )
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
            part = f"{dbt_name(name)}_part{i}"
            part_out: dict[str, Any] = {
                "name": part,
                "description": f"Aggregate {i} of `{name}` (dosi export helper).",
            }
            if not self._simple(
                part,
                {
                    "expression": {
                        "dialects": [{"dialect": "ANSI_SQL", "expression": agg.sql(dialect=READ)}]
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
            "expr": expr.sql(dialect=READ),
            "metrics": [{"name": n} for n in names.values()],
        }
        return True

    def _compose(self, name: str, derive: Mapping[str, Any], out: dict[str, Any]) -> bool:
        expr = str(derive.get("expr"))
        tree = sqlglot.parse_one(expr, read=READ)
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
                "numerator": dbt_name(tree.this.name),
                "denominator": dbt_name(tree.expression.name),
            }
            return True

        def rename(n: exp.Expression) -> exp.Expression:
            return exp.column(dbt_name(n.name)) if isinstance(n, exp.Column) else n

        out["type"] = "derived"
        out["type_params"] = {
            "expr": tree.transform(rename).sql(dialect=READ),
            "metrics": [{"name": dbt_name(n)} for n in members],
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
            base_name = dbt_name(str(base))
        else:
            base_name = f"{dbt_name(name)}_base"
            if base_name not in self.out_metrics:
                helper = {"name": base_name, "expression": m["expression"]}
                helper_out: dict[str, Any] = {
                    "name": base_name,
                    "description": f"The base aggregate of `{name}` (dosi export helper).",
                }
                datus = {k: v for k, v in vendor_payload(m, DATUS).items() if k == "time_dimension"}
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
        dbt = vendor_payload(m, DBT).get("metric")
        if kind == "rolling" and dbt and dbt.get("type") == "cumulative":
            out["type"] = "cumulative"
            out["type_params"] = windows_as_text(
                {
                    k: v
                    for k, v in (dbt.get("type_params") or {}).items()
                    if k in ("measure", "cumulative_type_params", "window")
                }
            )
            return True
        self._skip(name, "not_exportable", f"the D-WINDOW {json.dumps(window)} has no dbt form")
        return False
