"""LookML dimensions and dimension groups -> Ossie fields, and LookML SQL references.

`${TABLE}.col` is a column of the view's source; `${dim}` inlines that dimension's SQL;
`${group_date}` / `${group_month}` (a dimension group's timeframes) are the group's time
expression cast to a date or truncated; `${view.field}` reads another view, which a field
cannot (it is a warning). Dimension types: `string`, `number`, `zipcode` carry as they are;
`yesno` is a boolean (never NULL, as Looker shows it); `tier` is the CASE ladder Looker
builds, with Looker's labels for each `style`; `date` / `date_time` are time fields. A
dimension group of `type: time` is one time field (its timeframes are query grains), with
`datatype: date` a Date field and `datatype: yyyymmdd` a D-FORMAT encoded date.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from dosi.importers.common import column_field
from dosi.importers.cube_members import NotCarried
from dosi.importers.lookml_project import LookmlView
from dosi.importers.sql_refs import Ref, RefError, paren, resolve

REF = re.compile(r"\$\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\}")
LIQUID = re.compile(r"\{%|\{\{")
TRUNC = {"week": "WEEK", "month": "MONTH", "quarter": "QUARTER", "year": "YEAR", "hour": "HOUR",
         "minute": "MINUTE"}  # fmt: skip
GRAIN_TIMEFRAMES = frozenset({"raw", "time", "date", *TRUNC})
DATATYPES = {"string": "String", "number": None, "zipcode": "String", "yesno": "Boolean",
             "tier": "String", "date": "Date", "date_time": "DateTime"}  # fmt: skip


def yes(value: Any) -> bool:
    return str(value).strip().lower() in ("yes", "true")


@dataclass
class LookmlDataset:
    """The dataset being built for one view."""

    view: LookmlView
    name: str
    fields: list[dict[str, Any]] = field(default_factory=list)
    field_of: dict[str, str] = field(default_factory=dict)  # dimension / group -> field
    expr_of: dict[str, exp.Expression] = field(default_factory=dict)
    kind_of: dict[str, str] = field(default_factory=dict)  # dimension -> its LookML type
    primary_key: list[str] = field(default_factory=list)

    def dim(self, name: str) -> dict[str, Any] | None:
        return next((d for d in self.view.dimensions if d["name"] == name), None)

    def group(self, name: str) -> tuple[dict[str, Any], str] | None:
        """(the dimension group, the timeframe) `name` is, e.g. `created_month`."""
        for g in self.view.dimension_groups:
            if name == g["name"]:
                return g, "raw"
            prefix = g["name"] + "_"
            if name.startswith(prefix):
                return g, name[len(prefix) :]
        return None

    def measure(self, name: str) -> dict[str, Any] | None:
        return next((m for m in self.view.measures if m["name"] == name), None)


class LookmlSql:
    """Resolves LookML SQL against the project's views."""

    def __init__(
        self,
        datasets: dict[str, LookmlDataset],
        measure_tree: Callable[[str, str], exp.Expression],
        dialect: str | None,
    ) -> None:
        self.datasets = datasets
        self.measure_tree = measure_tree
        self.dialect = dialect

    def split(self, view: str, ref: Ref) -> tuple[str, str | None]:
        parts = ref.parts
        if parts == ("TABLE",):
            return view, None
        if len(parts) == 1:
            return view, parts[0]
        if len(parts) == 2:
            if parts[1] == "SQL_TABLE_NAME":
                raise NotCarried("lookml_sql_table_name", f"reads {ref.text}")
            if parts[0] not in self.datasets:
                raise NotCarried("lookml_unknown_reference", f"reads unknown view {parts[0]}")
            return parts[0], parts[1]
        raise NotCarried("lookml_unknown_reference", f"reads {ref.text}")

    def _resolve(
        self,
        sql: str,
        resolver: Callable[[Ref, str | None], exp.Expression],
        raw: Callable[[exp.Column], exp.Expression] | None = None,
    ) -> exp.Expression:
        if LIQUID.search(sql):
            raise NotCarried(
                "lookml_liquid", "uses Liquid templating, rendered by Looker per query"
            )
        try:
            return resolve(sql, REF, resolver, self.dialect, raw)
        except RefError as err:
            raise NotCarried("lookml_sql_unparsed", str(err)) from None

    # -- row level ---------------------------------------------------------------------------
    def member_row(self, view: str, name: str, seen: tuple[str, ...] = ()) -> exp.Expression:
        """The row expression of dimension or timeframe `name` of `view`."""
        ds = self.datasets[view]
        if name in ds.expr_of:
            return ds.expr_of[name]
        if name in seen:
            raise NotCarried("lookml_reference_cycle", f"{name} refers to itself")
        dim = ds.dim(name)
        if dim is not None:
            tree = self._dimension(view, dim, (*seen, name))
        else:
            found = ds.group(name)
            if found is None:
                raise NotCarried("lookml_unknown_reference", f"reads unknown field {name}")
            group, frame = found
            base = self.group_base(view, group, (*seen, name))
            tree = timeframe(base, frame)
        ds.expr_of[name] = tree
        return tree

    def group_base(self, view: str, group: dict[str, Any], seen: tuple[str, ...]) -> exp.Expression:
        ds = self.datasets[view]
        key = f"group:{group['name']}"
        if key not in ds.expr_of:
            if str(group.get("type", "time")) != "time":
                raise NotCarried(
                    "lookml_duration_group",
                    f"dimension group {group['name']} of type {group.get('type')} (durations)",
                )
            ds.expr_of[key] = self.row(
                view, str(group.get("sql", "${TABLE}." + group["name"])), seen
            )
        return ds.expr_of[key]

    def _dimension(self, view: str, dim: dict[str, Any], seen: tuple[str, ...]) -> exp.Expression:
        kind = str(dim.get("type", "string"))
        if kind in ("location", "distance", "duration"):
            raise NotCarried(f"lookml_{kind}_dimension", f"a {kind} dimension")
        sql = dim.get("sql")
        if sql is None:
            sql = "${TABLE}." + dim["name"]
        tree = self.row(view, str(sql), seen)
        if kind == "yesno":
            return exp.Case().when(paren(tree), exp.true()).else_(exp.false())
        if kind == "tier":
            return tier(tree, dim.get("tiers") or [], str(dim.get("style", "classic")))
        if kind not in DATATYPES:
            raise NotCarried("lookml_dimension_type", f"dimension type {kind}")
        return tree

    def row(self, view: str, sql: str, seen: tuple[str, ...] = ()) -> exp.Expression:
        def resolver(ref: Ref, column: str | None) -> exp.Expression:
            owner, member = self.split(view, ref)
            if owner != view:
                raise NotCarried(
                    "lookml_cross_view_reference",
                    f"reads {ref.text} of view {owner}; a field reads only its own view",
                )
            if member is None:
                if column is None:
                    raise NotCarried("lookml_sql_unparsed", "uses ${TABLE} where a value belongs")
                return exp.column(column)
            if column is not None:
                raise NotCarried("lookml_sql_unparsed", f"reads {ref.text}.{column}")
            if self.datasets[owner].measure(member) is not None:
                raise NotCarried("lookml_measure_in_dimension", f"reads measure {member}")
            return paren(self.member_row(owner, member, seen))

        return self._resolve(sql, resolver)

    # -- metric level ------------------------------------------------------------------------
    def metric_row(
        self, view: str, sql: str, refs: list[tuple[str, str]] | None = None
    ) -> exp.Expression:
        read = refs if refs is not None else []
        ds = self.datasets[view]

        def resolver(ref: Ref, column: str | None) -> exp.Expression:
            owner, member = self.split(view, ref)
            target = self.datasets[owner]
            if member is None:
                if column is None:
                    raise NotCarried("lookml_sql_unparsed", "uses ${TABLE} where a value belongs")
                return exp.column(column_field(target.fields, column), table=target.name)
            if column is not None:
                raise NotCarried("lookml_sql_unparsed", f"reads {ref.text}.{column}")
            if target.measure(member) is not None:
                read.append((owner, member))
                return paren(self.measure_tree(owner, member))
            return field_ref(target, member)

        def raw(col: exp.Column) -> exp.Expression:
            owner = ds if col.table in ("", view) else self.datasets.get(col.table)
            if owner is None:
                raise NotCarried("lookml_cross_view_reference", f"reads {col.sql()} directly")
            quoted = bool(col.this.quoted)
            return exp.column(column_field(owner.fields, col.name, quoted), table=owner.name)

        return self._resolve(sql, resolver, raw)


def field_ref(ds: LookmlDataset, member: str) -> exp.Expression:
    """`dataset.field` for a dimension, or a timeframe of a group over its field."""
    if member in ds.field_of:
        return exp.column(ds.field_of[member], table=ds.name)
    found = ds.group(member)
    if found is not None and f"group:{found[0]['name']}" in ds.field_of:
        col = exp.column(ds.field_of[f"group:{found[0]['name']}"], table=ds.name)
        return timeframe(col, found[1])
    raise NotCarried("lookml_member_not_carried", f"reads {ds.view.name}.{member}, not carried")


def timeframe(base: exp.Expression, frame: str) -> exp.Expression:
    """The expression of one timeframe of a time dimension group."""
    if frame in ("raw", "time"):
        return base
    if frame == "date":
        return exp.Cast(this=paren(base.copy()), to=exp.DataType.build("DATE"))
    unit = TRUNC.get(frame)
    if unit is None:
        raise NotCarried("lookml_timeframe", f"timeframe {frame} (a calendar part, not a grain)")
    return exp.TimestampTrunc(this=base.copy(), unit=exp.var(unit))


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def tier(value: exp.Expression, tiers: list[Any], style: str) -> exp.Expression:
    """Looker's tier ladder: `value` bucketed at `tiers`, labelled per `style`."""
    try:
        bounds = [float(t) for t in tiers]
    except (TypeError, ValueError):
        raise NotCarried("lookml_tier", f"tiers {tiers!r} are not numbers") from None
    if not bounds:
        raise NotCarried("lookml_tier", "a tier without tiers")
    style = style.lower()
    n = len(bounds)

    def label(i: int) -> str:
        lo = bounds[i - 1] if i > 0 else None
        hi = bounds[i] if i < n else None
        if style == "integer":
            if lo is None:
                return f"Below {_fmt(bounds[0])}"
            if hi is None:
                return f"{_fmt(lo)} or Above"
            return f"{_fmt(lo)} to {_fmt(hi - 1)}"
        if style == "relational":
            if lo is None:
                return f"< {_fmt(bounds[0])}"
            if hi is None:
                return f">= {_fmt(lo)}"
            return f">= {_fmt(lo)} and < {_fmt(hi)}"
        text = f"[{_fmt(lo) if lo is not None else '-inf'},{_fmt(hi) if hi is not None else 'inf'})"
        if lo is None:
            text = "(" + text[1:]
        return text if style == "interval" else f"T{i:02d} {text}"

    case = exp.Case().when(
        exp.Is(this=value.copy(), expression=exp.Null()), exp.Literal.string("Undefined")
    )
    for i, b in enumerate(bounds):
        case = case.when(
            exp.LT(this=value.copy(), expression=exp.Literal.number(_fmt(b))),
            exp.Literal.string(label(i)),
        )
    return case.else_(exp.Literal.string(label(n)))
