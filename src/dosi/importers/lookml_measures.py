"""LookML measures -> metrics.

`count` (rows, counted by the view's primary key when it has one), `count_distinct`, `sum`,
`average`, `min`, `max` and `median` aggregate their SQL; `filters` become CASE WHEN (see
`lookml_filters.py`); `number` / `date` / `string` / `yesno` measures already aggregate, and
reading another view's measure makes the metric a D-DERIVE `compose` of the metrics it
names; `running_total` over one measure is a D-WINDOW cumulative sum. Measures of the
`*_distinct` family (symmetric aggregates keyed by `sql_distinct_key`), `percentile` other
than the median, `list`, `percent_of_total` and `percent_of_previous` are warnings.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from dosi.importers.common import Notes, metric_obj, safe_name
from dosi.importers.cube_members import NotCarried, aggregate
from dosi.importers.lookml_fields import REF, LookmlDataset, LookmlSql, field_ref
from dosi.importers.lookml_filters import FilterNotCarried, predicate
from dosi.importers.sql_refs import (
    Ref,
    has_aggregate,
    over_metrics,
    render,
)

Key = tuple[str, str]
_AGG = {"count": "count", "count_distinct": "count_distinct", "sum": "sum", "average": "avg",
        "min": "min", "max": "max"}  # fmt: skip
_CALCULATED = frozenset({"number", "date", "string", "yesno"})


@dataclass
class BuiltMeasure:
    tree: exp.Expression
    payload: dict[str, Any]
    staged: bool = False
    datatype: str | None = None


def _filters(raw: Any) -> list[tuple[str, str]]:
    """(field, expression) pairs from both filter spellings lkml reads."""
    out: list[tuple[str, str]] = []
    for item in raw or []:
        if isinstance(item, list):
            for pair in item:
                out += [(str(k), str(v)) for k, v in pair.items()]
        elif isinstance(item, dict) and "field" in item:
            out.append((str(item["field"]), str(item.get("value", ""))))
    return out


class LookmlMeasures:
    def __init__(self, datasets: dict[str, LookmlDataset], notes: Notes, dialect: str | None):
        self.datasets = datasets
        self.notes = notes
        self.dialect = dialect
        self.sql = LookmlSql(datasets, self.tree, dialect)
        self.names: dict[Key, str] = {}
        self.built: dict[Key, BuiltMeasure] = {}
        self.failed: dict[Key, NotCarried] = {}
        self.building: set[Key] = set()
        counts = Counter(m["name"] for ds in datasets.values() for m in ds.view.measures)
        taken: list[str] = []
        for view, ds in datasets.items():
            for m in ds.view.measures:
                base = m["name"] if counts[m["name"]] == 1 else f"{ds.name}_{m['name']}"
                self.names[(view, m["name"])] = safe_name(base, taken)
                taken.append(self.names[(view, m["name"])])

    def tree(self, view: str, name: str) -> exp.Expression:
        return self.get(view, name).tree

    def get(self, view: str, name: str) -> BuiltMeasure:
        key = (view, name)
        if key in self.built:
            return self.built[key]
        if key in self.failed:
            raise NotCarried(
                "lookml_member_not_carried", f"reads {view}.{name} ({self.failed[key].reason})"
            )
        if key in self.building:
            raise NotCarried("lookml_reference_cycle", f"measure {name} refers to itself")
        self.building.add(key)
        try:
            built = self._build(view, name)
        except NotCarried as nc:
            self.failed[key] = nc
            raise
        finally:
            self.building.discard(key)
        self.built[key] = built
        return built

    def _condition(self, view: str, m: dict[str, Any]) -> exp.Expression | None:
        cond = None
        for fname, value in _filters(m.get("filters__all")):
            owner, member = self.sql.split(view, Ref(fname))
            ds = self.datasets[owner]
            if member is None:
                raise NotCarried("lookml_filter_not_carried", f"filter on {fname}")
            target = field_ref(ds, member)
            dim = ds.dim(member)
            kind = str(dim.get("type", "string")) if dim else "date"
            if kind == "date":
                raise NotCarried("lookml_filter_not_carried", f"date filter on {fname}: {value!r}")
            try:
                part = predicate(target, value, yesno=kind == "yesno", number=kind == "number")
            except FilterNotCarried as err:
                raise NotCarried("lookml_filter_not_carried", f"filter {fname}: {err}") from None
            cond = part if cond is None else exp.and_(cond, part)
        return cond

    def _build(self, view: str, name: str) -> BuiltMeasure:
        ds = self.datasets[view]
        m = ds.measure(name)
        assert m is not None
        kind = str(m.get("type", "count"))
        sql = m.get("sql")
        if kind in _AGG or kind == "median":
            if kind == "count" and sql is None:
                row: exp.Expression | None = (
                    exp.column(ds.primary_key[0], table=ds.name) if ds.primary_key else None
                )
            elif sql is None:
                raise NotCarried("lookml_sql_unparsed", f"a {kind} measure without sql")
            else:
                row = self.sql.metric_row(view, str(sql))
            cond = self._condition(view, m)
            if kind == "median":
                value = row if cond is None else exp.Case().when(cond, row)
                tree: exp.Expression = exp.Median(this=value)
            else:
                tree = aggregate(_AGG[kind], row, cond)
            datatype = "Integer" if kind.startswith("count") else None
            return BuiltMeasure(tree, {"dataset": ds.name}, datatype=datatype)
        if kind in _CALCULATED:
            if m.get("filters__all"):
                raise NotCarried("lookml_filtered_calculation", f"filters on a {kind} measure")
            refs: list[Key] = []
            tree = self.sql.metric_row(view, str(sql or ""), refs)
            if not has_aggregate(tree):
                raise NotCarried("lookml_sql_unparsed", f"the {kind} measure aggregates nothing")
            staged = [r for r in refs if r[0] != view or self.built[r].staged]
            if not staged:
                return BuiltMeasure(tree, {"dataset": ds.name})
            expr = self._compose(view, str(sql))
            if expr is None:
                raise NotCarried(
                    "lookml_compose_not_carried",
                    "combines other views' measures with other SQL",
                    "split it into one metric per view and a derived metric over them",
                )
            if any(r[0] != view for r in refs):
                self.notes.warn(
                    "lookml_measures_per_view",
                    "each view's measure is computed over its own view and the results "
                    "combined per group (Looker computes them over the explore's joined rows; "
                    "rows of one view without a match in the other can differ)",
                    f"{view}.{name}",
                )
            return BuiltMeasure(tree, {"derive": {"type": "compose", "expr": expr}}, True)
        if kind == "running_total":
            key = self._single_ref(view, sql)
            if key is None or self.get(*key).staged:
                raise NotCarried(
                    "lookml_running_total", "a running total of anything but a measure"
                )
            base = self.get(*key)
            window = {"type": "cumulative", "function": "sum"}
            return BuiltMeasure(base.tree.copy(), {"dataset": ds.name, "window": window}, True)
        if kind.endswith("_distinct") or kind == "percentile":
            raise NotCarried(f"lookml_{kind}", f"a {kind} measure")
        raise NotCarried("lookml_measure_type", f"measure type {kind}")

    def _single_ref(self, view: str, sql: Any) -> Key | None:
        m = REF.fullmatch(str(sql or "").strip())
        if m is None:
            return None
        try:
            owner, member = self.sql.split(view, Ref(m.group(1)))
        except NotCarried:
            return None
        if member is None or self.datasets[owner].measure(member) is None:
            return None
        return owner, member

    def _compose(self, view: str, sql: str) -> str | None:
        def metric_of(ref: Ref) -> str | None:
            key = self._single_ref(view, "${" + ref.text + "}")
            return None if key is None else self.names[key]

        return over_metrics(sql, REF, self.dialect, metric_of)

    def metrics(self) -> tuple[list[dict[str, Any]], dict[str, Key]]:
        out: list[dict[str, Any]] = []
        member_of: dict[str, Key] = {}
        for view, ds in self.datasets.items():
            for m in ds.view.measures:
                key = (view, m["name"])
                where = f"{view}.{m['name']}"
                try:
                    built = self.get(*key)
                except NotCarried as nc:
                    self.notes.warn(nc.code, f"{nc.reason}; not carried", where, nc.hint)
                    continue
                if str(m.get("type")) == "running_total":
                    self.notes.warn(
                        "lookml_running_total_on_time",
                        "a running total of the result rows became a cumulative sum "
                        "along the time axis: the same numbers when the query is grouped by time",
                        where,
                    )
                synonyms = [where] + ([str(m["label"])] if m.get("label") else [])
                out.append(
                    metric_obj(
                        self.names[key],
                        render(built.tree),
                        datatype=built.datatype,
                        description=m.get("description"),
                        synonyms=synonyms,
                        datus=built.payload or None,
                    )
                )
                member_of[self.names[key]] = key
        return out, member_of
