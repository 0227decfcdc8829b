"""Cube measures -> metrics, including the multi-stage ones.

Each measure gets one metric whose Ossie expression is always the plain SQL reading of it
(what an engine without the extensions computes) and, where Cube stages the calculation,
the DATUS key that stages it the same way:

| Cube                                              | metric                                    |
|---------------------------------------------------|-------------------------------------------|
| `count`/`sum`/`avg`/`min`/`max`/`count_distinct`  | the aggregate (`filters` as CASE WHEN)    |
| `number` over measures of the same cube           | the inlined arithmetic of their aggregates|
| `number` over other cubes' or staged measures     | D-DERIVE `compose` over their metrics     |
| `rolling_window` (unbounded / to_date / trailing) | D-WINDOW cumulative / reset / rolling     |
| rolling `avg`                                     | rolling sum / rolling count (compose)     |
| `time_shift` (one interval, prior / next)         | D-WINDOW offset, `calculation: value`     |
| `type: rank` + `order_by` one measure, `reduce_by`| D-WINDOW rank, partition except reduce_by |
| `reduce_by` / `group_by` over one measure         | D-DERIVE lod `exclude` / `fixed`          |

A window or lod over a measure that is itself staged names it as `window.base`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from dosi.importers.common import Notes, metric_obj, safe_name
from dosi.importers.cube_members import (
    AGGREGATES,
    PRE_AGGREGATED,
    REF,
    CubeDataset,
    MemberSql,
    NotCarried,
    aggregate,
)
from dosi.importers.cube_windows import WindowNotCarried, rolling_payload, time_shift_payload
from dosi.importers.sql_refs import (
    Ref,
    has_aggregate,
    over_metrics,
    render,
)

Key = tuple[str, str]  # (cube, measure)


@dataclass
class Built:
    """A measure's metric: its expression tree, DATUS payload, and whether it is staged (a
    window, lod or compose: other metrics must name it, never inline it)."""

    tree: exp.Expression
    payload: dict[str, Any]
    staged: bool = False
    datatype: str | None = None
    helpers: list[dict[str, Any]] = field(default_factory=list)
    caveats: list[tuple[str, str]] = field(default_factory=list)


class MeasureBuilder:
    """Builds every measure's metric on demand (a measure may read others first)."""

    def __init__(self, datasets: dict[str, CubeDataset], notes: Notes, dialect: str | None) -> None:
        self.datasets = datasets
        self.notes = notes
        self.dialect = dialect
        self.sql = MemberSql(datasets, self.tree, dialect)
        self.names: dict[Key, str] = {}
        self.built: dict[Key, Built] = {}
        self.failed: dict[Key, NotCarried] = {}
        self.building: set[Key] = set()
        self._name_all()

    def _name_all(self) -> None:
        """Metric names: the measure's own when unique across cubes, else `<cube>_<name>`."""
        counts = Counter(m["name"] for ds in self.datasets.values() for m in ds.spec.measures)
        taken: list[str] = []
        for cube, ds in self.datasets.items():
            for m in ds.spec.measures:
                base = m["name"] if counts[m["name"]] == 1 else f"{ds.name}_{m['name']}"
                name = safe_name(base, taken)
                taken.append(name)
                self.names[(cube, m["name"])] = name

    # -- on-demand building ----------------------------------------------------------------
    def get(self, cube: str, name: str) -> Built:
        key = (cube, name)
        if key in self.built:
            return self.built[key]
        if key in self.failed:
            nc = self.failed[key]
            raise NotCarried("cube_member_not_carried", f"reads {cube}.{name} ({nc.reason})")
        if key in self.building:
            raise NotCarried("cube_reference_cycle", f"measure {name} refers to itself")
        self.building.add(key)
        try:
            built = self._build(cube, name)
        except WindowNotCarried as wn:
            self.failed[key] = NotCarried("cube_window_not_carried", str(wn))
            raise self.failed[key] from None
        except NotCarried as nc:
            self.failed[key] = nc
            raise
        finally:
            self.building.discard(key)
        self.built[key] = built
        return built

    def tree(self, cube: str, name: str) -> exp.Expression:
        """The expression a reference to the measure inlines (MemberSql's callback)."""
        return self.get(cube, name).tree

    def _single_ref(self, cube: str, sql: Any) -> Key | None:
        """The measure `sql` is exactly a reference to, if any (`{revenue}`)."""
        m = REF.fullmatch(str(sql or "").strip())
        if m is None:
            return None
        owner, member = self.sql.split(cube, Ref(m.group(1)))
        ds = self.datasets.get(owner)
        if member is None or ds is None or ds.measure(member) is None:
            return None
        return owner, member

    def _build(self, cube: str, name: str) -> Built:
        ds = self.datasets[cube]
        m = ds.measure(name)
        assert m is not None
        kind = str(m.get("type", "")).lower()
        if m.get("case") is not None:
            raise NotCarried("cube_case_measure", "a case (switch) measure")
        if m.get("time_shift") is not None:
            return self._time_shift(cube, m)
        if m.get("multi_stage") and kind == "rank":
            return self._rank(cube, m)
        if m.get("multi_stage") and (m.get("group_by") or m.get("reduce_by")):
            return self._lod(cube, m, kind)
        if kind in AGGREGATES:
            if m.get("multi_stage"):
                raise NotCarried("cube_multi_stage", f"a multi_stage {kind} measure")
            return self._aggregate(cube, ds, m, kind)
        if kind in PRE_AGGREGATED:
            return self._calculated(cube, ds, m, kind)
        raise NotCarried("cube_type", f"measure type {kind or '(none)'} is unknown")

    def _condition(self, cube: str, m: dict[str, Any]) -> exp.Expression | None:
        cond = None
        for flt in m.get("filters") or []:
            sql = flt.get("sql") if isinstance(flt, dict) else flt
            part = self.sql.metric_row(cube, str(sql))
            cond = part if cond is None else exp.and_(cond, part)
        return cond

    def _aggregate(self, cube: str, ds: CubeDataset, m: dict[str, Any], kind: str) -> Built:
        sql = m.get("sql")
        row = self.sql.metric_row(cube, str(sql)) if sql not in (None, "") else None
        if row is None and kind == "count" and ds.primary_key:
            # rows counted by the key (never NULL): COUNT(*) names no dataset, so a metric
            # that inlines it next to another cube's aggregate could not tell whose rows
            row = exp.column(ds.primary_key[0], table=ds.name)
        cond = self._condition(cube, m)
        tree = aggregate(kind, row, cond)
        datatype = "Integer" if kind.startswith("count") else None
        built = Built(tree, {"dataset": ds.name}, datatype=datatype)
        if kind == "count_distinct_approx":
            built.caveats.append(
                ("cube_approx_made_exact", "the approximate distinct count became exact")
            )
        window = m.get("rolling_window")
        if window is None:
            return built
        if not isinstance(window, dict):
            raise WindowNotCarried("rolling_window is not a mapping")
        built.staged = True
        if kind == "avg":
            return self._rolling_avg(cube, ds, m, row, cond, window)
        built.payload["window"], caveat = rolling_payload(window, kind)
        if caveat:
            built.caveats.append(("cube_rolling_window_in_buckets", caveat))
        return built

    def _rolling_avg(
        self,
        cube: str,
        ds: CubeDataset,
        m: dict[str, Any],
        row: exp.Expression | None,
        cond: exp.Expression | None,
        window: dict[str, Any],
    ) -> Built:
        """A rolling average is the rolling sum over the rolling count of its rows: two window
        metrics and a compose over them (never an average of bucket averages)."""
        name = self.names[(cube, m["name"])]
        taken = set(self.names.values())
        helpers = []
        parts: dict[str, str] = {}
        trees: dict[str, exp.Expression] = {}
        caveats = []
        for part in ("sum", "count"):
            payload, caveat = rolling_payload(window, part)
            if caveat:
                caveats.append(("cube_rolling_window_in_buckets", caveat))
            helper = safe_name(f"{name}_window_{part}", taken)
            taken.add(helper)
            parts[part] = helper
            trees[part] = aggregate(part, row.copy() if row is not None else None, cond)
            helpers.append(
                metric_obj(
                    helper,
                    render(trees[part]),
                    datatype="Integer" if part == "count" else None,
                    description=f"Helper of {name}: the windowed {part} of its rows.",
                    datus={"dataset": ds.name, "window": payload},
                )
            )
        tree = exp.Div(this=trees["sum"].copy(), expression=trees["count"].copy())
        derive = {"type": "compose", "expr": f"{parts['sum']} / {parts['count']}"}
        return Built(tree, {"derive": derive}, True, None, helpers, caveats[:1])

    def _calculated(self, cube: str, ds: CubeDataset, m: dict[str, Any], kind: str) -> Built:
        if m.get("filters"):
            raise NotCarried("cube_filtered_calculation", f"filters on a {kind} measure")
        sql = m.get("sql")
        if sql in (None, ""):
            raise NotCarried("cube_sql_unparsed", f"a {kind} measure without sql")
        refs: list[Key] = []
        tree = self.sql.metric_row(cube, str(sql), refs)
        if not has_aggregate(tree):
            raise NotCarried("cube_sql_unparsed", f"the {kind} measure's sql aggregates nothing")
        staged = [r for r in refs if r[0] != cube or self.built[r].staged]
        if not staged:
            return Built(tree, {"dataset": ds.name})
        expr = self._compose_expr(cube, str(sql))
        if expr is None:
            raise NotCarried(
                "cube_compose_not_carried",
                "combines measures of other cubes (or windowed measures) with other SQL",
                "split it into one metric per part and a derived metric over them",
            )
        return Built(tree, {"derive": {"type": "compose", "expr": expr}}, True)

    def _compose_expr(self, cube: str, sql: str) -> str | None:
        """The measure's SQL over metric names (a D-DERIVE compose), or None when it reads
        anything but measures."""

        def metric_of(ref: Ref) -> str | None:
            key = self._single_ref(cube, "{" + ref.text + "}")
            return None if key is None else self.names[key]

        return over_metrics(sql, REF, self.dialect, metric_of)

    def _base(
        self, key: Key, payload_window: dict[str, Any], helpers: list[dict[str, Any]]
    ) -> exp.Expression:
        """The expression of a window over measure `key`; a staged measure is named as the
        window's base (D-DERIVE `window.base`). A window over a window lands on a compose
        stage of its own: a one-member compose helper in between (appended to `helpers`)."""
        built = self.get(*key)
        if not built.staged:
            return built.tree.copy()
        base = self.names[key]
        if "window" in built.payload:
            stage = safe_name(f"{base}_stage", set(self.names.values()))
            helpers.append(
                metric_obj(
                    stage,
                    render(built.tree),
                    datatype=built.datatype,
                    description=f"Helper: {base} as a stage another window can read.",
                    datus={"derive": {"type": "compose", "expr": base}},
                )
            )
            base = stage
        payload_window["base"] = base
        return built.tree.copy()

    def _time_shift(self, cube: str, m: dict[str, Any]) -> Built:
        key = self._single_ref(cube, m.get("sql"))
        if key is None:
            raise NotCarried(
                "cube_time_shift_not_carried", "a time shift of anything but one measure"
            )
        window, td = time_shift_payload(m.get("time_shift"))
        helpers: list[dict[str, Any]] = []
        tree = self._base(key, window, helpers)
        payload: dict[str, Any] = {"window": window}
        owner_ds = self.datasets[key[0]]
        if "base" not in window:
            payload["dataset"] = owner_ds.name
        if td is not None:
            owner, member = self.sql.split(cube, Ref(td))
            target = self.datasets.get(owner)
            if target is None or member not in target.field_of:
                raise NotCarried("cube_unknown_reference", f"time shift on unknown {td}")
            payload["time_dimension"] = f"{target.name}.{target.field_of[member]}"
        return Built(tree, payload, True, self.get(*key).datatype, helpers)

    def _rank(self, cube: str, m: dict[str, Any]) -> Built:
        order = m.get("order_by") or []
        if not isinstance(order, list) or len(order) != 1 or not isinstance(order[0], dict):
            raise NotCarried("cube_rank_not_carried", "a rank needs one order_by measure")
        key = self._single_ref(cube, order[0].get("sql"))
        if key is None:
            raise NotCarried("cube_rank_not_carried", "a rank ordered by anything but a measure")
        direction = str(order[0].get("dir", "asc")).lower()
        rank: dict[str, Any] = {
            "function": "rank",
            "order": {"by": "value", "direction": "desc" if direction == "desc" else "asc"},
        }
        reduce = self._dims(cube, m.get("reduce_by"))
        if reduce:
            rank["partition"] = {"mode": "query_dimensions_except", "exclude": reduce}
        window: dict[str, Any] = {"rank": rank}
        helpers: list[dict[str, Any]] = []
        tree = self._base(key, window, helpers)
        payload = {"window": window}
        if "base" not in window:
            payload["dataset"] = self.datasets[key[0]].name
        return Built(tree, payload, True, "Integer", helpers)

    def _lod(self, cube: str, m: dict[str, Any], kind: str) -> Built:
        if m.get("group_by") and m.get("reduce_by"):
            raise NotCarried("cube_multi_stage", "both group_by and reduce_by")
        key = self._single_ref(cube, m.get("sql"))
        if key is None or kind not in ("sum", "min", "max", "avg", "count", "number"):
            raise NotCarried(
                "cube_multi_stage", "a group_by / reduce_by over anything but a measure"
            )
        base = self.get(*key)
        if base.staged:
            raise NotCarried("cube_multi_stage", "a level of detail over a staged measure")
        if m.get("reduce_by"):
            dims = self._dims(cube, m["reduce_by"])
            expr = f"exclude({self.names[key]}, {', '.join(dims)})"
            caveat = None
        else:
            dims = self._dims(cube, m["group_by"])
            expr = f"fixed({self.names[key]}, {', '.join(dims)})"
            caveat = (
                "group_by became fixed(...): the same number when the query groups by those "
                "dimensions; a fixed level of detail is computed before dimension filters"
            )
        tree = exp.func("SUM", base.tree.copy())
        built = Built(tree, {"derive": {"type": "lod", "expr": expr}}, True, base.datatype)
        if caveat:
            built.caveats.append(("cube_group_by_as_fixed", caveat))
        return built

    def _dims(self, cube: str, names: Any) -> list[str]:
        out = []
        for item in names or []:
            ref = str(item).strip("{}$ ")
            owner, member = self.sql.split(cube, Ref(ref))
            ds = self.datasets.get(owner)
            if ds is None or member not in ds.field_of:
                raise NotCarried("cube_unknown_reference", f"reads unknown dimension {item}")
            out.append(f"{ds.name}.{ds.field_of[member]}")
        return out

    # -- output ----------------------------------------------------------------------------
    def metrics(self) -> tuple[list[dict[str, Any]], dict[str, Key]]:
        """Every carried measure's metric (helpers first), and metric name -> its measure."""
        out: list[dict[str, Any]] = []
        member_of: dict[str, Key] = {}
        for cube, ds in self.datasets.items():
            for m in ds.spec.measures:
                key = (cube, m["name"])
                where = f"{cube}.{m['name']}"
                try:
                    built = self.get(*key)
                except NotCarried as nc:
                    self.notes.warn(nc.code, f"{nc.reason}; not carried", where, nc.hint)
                    continue
                for code, caveat in built.caveats:
                    self.notes.warn(code, caveat, where)
                out += built.helpers
                synonyms = [where] + ([str(m["title"])] if m.get("title") else [])
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
