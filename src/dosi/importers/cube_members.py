"""Cube dimensions and measures -> Ossie fields and metrics.

A dimension's SQL becomes a field expression over the cube's source columns: `{CUBE}.col`
and bare columns stay columns, `{CUBE.dim}` / `{dim}` inline that dimension's expression.
A measure becomes a metric: its row-level SQL is aggregated per its `type` (`count`,
`count_distinct`, `sum`, `avg`, `min`, `max`; `number` and `number_agg` measures already
aggregate), with `filters` folded into `CASE WHEN`, over fields of the dataset (a source
column no dimension exposes gets a hidden field of its own). Measure references inline the
referenced measure's aggregate; a reference into another cube makes the metric a D-DERIVE
`compose` of the metrics it names, which the engine evaluates per fact before combining.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from dosi.importers.common import column_field
from dosi.importers.cube_project import CubeSpec
from dosi.importers.sql_refs import Ref, RefError, paren, resolve

REF = re.compile(r"\$?\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*(?:\(\))?\}")
CONTEXT_VARIABLES = frozenset(
    {"FILTER_PARAMS", "FILTER_GROUP", "SECURITY_CONTEXT", "SQL_UTILS", "COMPILE_CONTEXT"}
)
_SELF = "CUBE"

DIMENSION_TYPES = {"string": "String", "number": None, "boolean": "Boolean", "time": "DateTime"}
AGGREGATES = {
    "count": "COUNT",
    "count_distinct": "COUNT",
    "count_distinct_approx": "COUNT",
    "sum": "SUM",
    "avg": "AVG",
    "min": "MIN",
    "max": "MAX",
}
PRE_AGGREGATED = frozenset({"number", "number_agg", "string", "time", "boolean"})


class NotCarried(Exception):
    """A member that cannot be carried: `code` and the reason, reported as a warning."""

    def __init__(self, code: str, reason: str, hint: str | None = None) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason
        self.hint = hint


@dataclass
class CubeDataset:
    """The dataset being built for one cube: its fields, and each Cube dimension's field."""

    spec: CubeSpec
    name: str
    fields: list[dict[str, Any]] = field(default_factory=list)
    field_of: dict[str, str] = field(default_factory=dict)  # cube dimension -> field name
    expr_of: dict[str, exp.Expression] = field(default_factory=dict)  # dimension -> row tree
    primary_key: list[str] = field(default_factory=list)
    time_fields: list[str] = field(default_factory=list)

    def dim(self, name: str) -> dict[str, Any] | None:
        return next((d for d in self.spec.dimensions if d["name"] == name), None)

    def measure(self, name: str) -> dict[str, Any] | None:
        return next((m for m in self.spec.measures if m["name"] == name), None)

    def taken(self) -> list[str]:
        return [f["name"] for f in self.fields]

    def column_field(self, column: exp.Column) -> str:
        """The field exposing source column `column` (common.column_field)."""
        return column_field(self.fields, column.name, bool(column.this.quoted))


class MemberSql:
    """Resolves the SQL of one cube's members against the whole project."""

    def __init__(
        self,
        datasets: dict[str, CubeDataset],
        measure_tree: Callable[[str, str], exp.Expression],
        dialect: str | None,
    ) -> None:
        self.datasets = datasets
        self.measure_tree = measure_tree  # (cube, measure) -> aggregate tree
        self.dialect = dialect

    def split(self, cube: str, ref: Ref) -> tuple[str, str | None]:
        """(cube, member) a reference names; member None for a bare cube reference."""
        parts = ref.parts
        if parts[0] in CONTEXT_VARIABLES:
            raise NotCarried(
                "cube_context_variable",
                f"reads {parts[0]}, which Cube fills per request",
                "write the condition as a query filter instead",
            )
        if len(parts) == 1:
            if parts[0] == _SELF or parts[0] == cube:
                return cube, None
            if parts[0] in self.datasets and parts[0] != cube:
                ds = self.datasets[cube]
                if ds.dim(parts[0]) is None and ds.measure(parts[0]) is None:
                    return parts[0], None
            return cube, parts[0]
        if len(parts) == 2:
            owner = cube if parts[0] in (_SELF, cube) else parts[0]
            if owner not in self.datasets:
                raise NotCarried("cube_unknown_reference", f"references unknown cube {parts[0]}")
            return owner, parts[1]
        raise NotCarried(
            "cube_cross_cube_reference",
            f"references {ref.text} through a join path, which a field cannot follow",
        )

    # -- row level (field expressions) -------------------------------------------------------
    def dimension_tree(self, cube: str, name: str, seen: tuple[str, ...] = ()) -> exp.Expression:
        ds = self.datasets[cube]
        if name in ds.expr_of:
            return ds.expr_of[name]
        dim = ds.dim(name)
        if dim is None:
            raise NotCarried("cube_unknown_reference", f"references unknown member {name}")
        if name in seen:
            raise NotCarried("cube_reference_cycle", f"dimension {name} refers to itself")
        if dim.get("sub_query"):
            raise NotCarried(
                "cube_sub_query_dimension",
                "is a sub_query dimension (a measure of another cube per row)",
                "declare it as a D-LOD fixed field by hand if you need it",
            )
        sql = dim.get("sql")
        if dim.get("case") is not None:
            tree = self._case(cube, dim["case"], (*seen, name))
        elif isinstance(sql, (str, int, float)):
            tree = self.row(cube, str(sql), (*seen, name))
        else:
            raise NotCarried("cube_dimension_without_sql", "has no sql")
        ds.expr_of[name] = tree
        return tree

    def row(self, cube: str, sql: str, seen: tuple[str, ...] = ()) -> exp.Expression:
        """`sql` over the cube's own source columns (field context)."""

        def resolver(ref: Ref, column: str | None) -> exp.Expression:
            owner, member = self.split(cube, ref)
            if owner != cube:
                raise NotCarried(
                    "cube_cross_cube_reference",
                    f"reads {ref.text} of cube {owner}; a field reads only its own cube",
                )
            if member is None:
                if column is None:
                    raise NotCarried("cube_sql_unparsed", "uses {CUBE} where a value belongs")
                return exp.column(column)
            if column is not None:
                raise NotCarried("cube_sql_unparsed", f"reads {ref.text}.{column}")
            return paren(self.dimension_tree(cube, member, seen))

        return self._resolve(sql, resolver, raw=_unqualified(cube))

    def _case(self, cube: str, case: Any, seen: tuple[str, ...]) -> exp.Expression:
        if not isinstance(case, dict) or not isinstance(case.get("when"), list):
            raise NotCarried("cube_sql_unparsed", "has a case without when")
        out = exp.Case()
        for item in case["when"]:
            cond = self.row(cube, str(item.get("sql")), seen)
            out = out.when(cond, self._label(cube, item.get("label"), seen))
        other = case.get("else")
        if isinstance(other, dict) and "label" in other:
            out = out.else_(self._label(cube, other["label"], seen))
        return out

    def _label(self, cube: str, label: Any, seen: tuple[str, ...]) -> exp.Expression:
        if isinstance(label, dict) and "sql" in label:
            return self.row(cube, str(label["sql"]), seen)
        return exp.Literal.string(str(label))

    # -- metric level (aggregates over dataset fields) ---------------------------------------
    def metric_row(
        self, cube: str, sql: str, refs: list[tuple[str, str]] | None = None
    ) -> exp.Expression:
        """`sql` with columns as `dataset.field` references and measure references inlined
        (each measure read is appended to `refs`)."""
        ds = self.datasets[cube]
        read = refs if refs is not None else []

        def resolver(ref: Ref, column: str | None) -> exp.Expression:
            owner, member = self.split(cube, ref)
            target = self.datasets[owner]
            if member is None:
                if column is None:
                    raise NotCarried("cube_sql_unparsed", "uses {CUBE} where a value belongs")
                return exp.column(target.column_field(exp.column(column)), table=target.name)
            if column is not None:
                raise NotCarried("cube_sql_unparsed", f"reads {ref.text}.{column}")
            if target.measure(member) is not None:
                read.append((owner, member))
                return paren(self.measure_tree(owner, member))
            if target.dim(member) is not None:
                if member not in target.field_of:
                    raise NotCarried(
                        "cube_member_not_carried", f"reads dimension {ref.text}, not carried"
                    )
                return exp.column(target.field_of[member], table=target.name)
            seg = next((s for s in target.spec.segments if s["name"] == member), None)
            if seg is not None:
                return paren(self.row(owner, str(seg.get("sql"))))
            raise NotCarried("cube_unknown_reference", f"references unknown member {ref.text}")

        def raw(col: exp.Column) -> exp.Expression:
            if col.table and col.table not in (cube, _SELF):
                raise NotCarried("cube_cross_cube_reference", f"reads {col.sql()} directly")
            return exp.column(ds.column_field(col), table=ds.name)

        return self._resolve(sql, resolver, raw=raw)

    def _resolve(
        self,
        sql: str,
        resolver: Callable[[Ref, str | None], exp.Expression],
        raw: Callable[[exp.Column], exp.Expression] | None = None,
    ) -> exp.Expression:
        try:
            return resolve(sql, REF, resolver, self.dialect, raw)
        except RefError as err:
            raise NotCarried("cube_sql_unparsed", str(err)) from None


def _unqualified(cube: str) -> Callable[[exp.Column], exp.Expression]:
    """Field context: `orders.amount` written against the cube's own alias is `amount`."""

    def raw(col: exp.Column) -> exp.Expression:
        if col.table in (cube, _SELF):
            return exp.column(col.name, quoted=col.this.quoted)
        if col.table:
            raise NotCarried("cube_cross_cube_reference", f"reads {col.sql()} directly")
        return col

    return raw


def aggregate(
    kind: str, row: exp.Expression | None, condition: exp.Expression | None
) -> exp.Expression:
    """The aggregate a measure `type` applies to its row expression (None: `count` without
    sql, i.e. rows), with `filters` as CASE WHEN."""
    func = AGGREGATES[kind]
    if row is None:
        value: exp.Expression = exp.Literal.number(1) if condition is not None else exp.Star()
    else:
        value = row
    if condition is not None:
        value = exp.Case().when(condition, value)
    if kind in ("count_distinct", "count_distinct_approx"):
        return exp.Count(this=exp.Distinct(expressions=[value]))
    if func == "COUNT":
        return exp.Count(this=value)
    return exp.func(func, value)
