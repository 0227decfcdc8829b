"""What one expression of a semantic SQL query names: a dimension at a grain, or a metric.

`MEASURE(m)` and a bare metric column are the metric; an aggregate around a metric is accepted
when it computes the metric itself (`SUM` of a sum or count, `MAX` of a max, `COUNT(DISTINCT)`
of a distinct count) and refused otherwise, since it would re-aggregate values dosi already
aggregated. `DATE_TRUNC('month', t)` over a time column is that column at month grain.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from dosi.errors import closest
from dosi.ir.model import GRAIN_RANK, ModelIr
from dosi.query.resolve import METRIC_TIME
from dosi.query.semantic_sql.errors import (
    AGGREGATE,
    UNKNOWN_COLUMN,
    refuse,
    snippet,
    unsupported,
)
from dosi.query.semantic_sql.shape import VirtualColumn, VirtualTable

_AGGREGATES: dict[type[exp.Expression], str] = {
    exp.Sum: "SUM",
    exp.Max: "MAX",
    exp.Min: "MIN",
    exp.Avg: "AVG",
    exp.Count: "COUNT",
}
# the wrappers that compute a plain aggregate metric from its own values at a finer grain
_REAGGREGATE: dict[str, tuple[str, ...]] = {
    "sum": ("SUM",),
    "count": ("COUNT", "SUM"),
    "count_star": ("COUNT", "SUM"),
    "count_distinct": ("COUNT(DISTINCT)",),
    "min": ("MIN",),
    "max": ("MAX",),
}
_CASTS = {exp.DataType.Type.DATE: "date", exp.DataType.Type.TIMESTAMP: "timestamp"}


@dataclass(frozen=True)
class DimRef:
    """A dimension at a grain: its dosi group-by spelling, and a DATE / TIMESTAMP cast of
    its values (None: as dosi returns them)."""

    spelling: str
    column: VirtualColumn
    cast: str | None = None


@dataclass(frozen=True)
class Scope:
    """The table a query reads and the names its columns may be qualified with."""

    model: ModelIr
    table: VirtualTable
    qualifiers: frozenset[str]

    def lookup(self, col: exp.Column) -> VirtualColumn:
        """The virtual column a column reference names (unquoted names fold to lower case,
        as PostgreSQL folds them; a quoted `"orders.channel"` is the dosi spelling)."""
        parts = [p.name for p in col.parts[:-1]]
        if parts and parts[-1].lower() not in self.qualifiers:
            raise refuse(
                UNKNOWN_COLUMN,
                f"`{snippet(col)}` is qualified by {parts[-1]!r}, which is not a table of "
                "this query",
                candidates=sorted(self.qualifiers),
                hint=f"qualify columns with the table name {self.table.name!r} or its alias",
            )
        ident = col.this
        name = ident.name
        found = (
            self.table.column(name)
            if ident.quoted
            else (self.table.column(name.lower()) or self.table.column(name))
        )
        if found is None:
            raise refuse(
                UNKNOWN_COLUMN,
                f"column {name!r} is not a dimension or metric of table {self.table.name!r}",
                candidates=closest(name, self.table.names),
                hint="list the columns with \\d or information_schema.columns",
            )
        return found


def _unwrap(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def dimension(scope: Scope, node: exp.Expression) -> DimRef | None:
    """The dimension `node` names, None when it names none (a metric, an aggregate...)."""
    node = _unwrap(node)
    if isinstance(node, exp.Column):
        c = scope.lookup(node)
        if c.is_metric:
            return None
        if not c.groupable:
            raise refuse(
                UNKNOWN_COLUMN,
                f"{c.group_by} is a measure column (is_dimension: false): it can be read in "
                "WHERE but not selected or grouped",
                hint="group by a dimension, or aggregate it through a metric",
            )
        return DimRef(c.group_by, c)
    if isinstance(node, (exp.Cast, exp.TryCast)):
        inner = dimension(scope, node.this)
        if inner is None:
            return None
        target = _CASTS.get(node.to.this)
        if target is None or not inner.column.is_time:
            raise unsupported(
                node,
                "a CAST of a dimension",
                hint=(
                    "select the dimension itself; only time columns may be cast, to DATE or "
                    "TIMESTAMP"
                ),
            )
        return DimRef(inner.spelling, inner.column, target)
    if isinstance(node, (exp.TimestampTrunc, exp.DateTrunc)):
        return _truncated(scope, node)
    return None


def _truncated(scope: Scope, node: exp.Expression) -> DimRef | None:
    unit = node.args.get("unit")
    grain = (unit.name if unit is not None else "").lower()
    base = _unwrap(node.this)
    if not isinstance(base, exp.Column):
        return None
    c = scope.lookup(base)
    if c.is_metric or not c.is_time:
        raise unsupported(node, "DATE_TRUNC of a column that is not a time dimension")
    if grain not in GRAIN_RANK:
        raise unsupported(
            node,
            f"DATE_TRUNC to {grain or 'that unit'}",
            hint=("time grains are day, week, month, quarter and year"),
        )
    if c.grain is not None and GRAIN_RANK[c.grain] > GRAIN_RANK[grain]:
        raise unsupported(
            node,
            f"DATE_TRUNC to {grain} of a {c.grain} column",
            hint=(f"truncate the column as stored ({c.field.replace('.', '__')}) instead"),
        )
    spelling = f"{c.field}:{grain}"
    named = scope.table.column(spelling)
    if named is None:  # a grain finer than the field's own
        raise unsupported(
            node,
            f"DATE_TRUNC to {grain} of {c.field}",
            hint=("that grain is finer than the field's granularity"),
        )
    return DimRef(spelling, named)


def metric(scope: Scope, node: exp.Expression) -> str | None:
    """The metric `node` computes, None when it is not a metric expression; an aggregate
    that would not compute the metric itself is refused."""
    node = _unwrap(node)
    if isinstance(node, exp.Column):
        c = scope.lookup(node)
        return c.name if c.is_metric else None
    if isinstance(node, exp.Anonymous) and node.name.upper() == "MEASURE":
        args = node.expressions
        inner = _unwrap(args[0]) if len(args) == 1 else None
        if not isinstance(inner, exp.Column) or not scope.lookup(inner).is_metric:
            raise unsupported(node, "MEASURE() of something other than one metric column")
        return scope.lookup(inner).name
    wrapper = _AGGREGATES.get(type(node))
    if wrapper is None:
        return None
    arg = node.this
    distinct = isinstance(arg, exp.Distinct)
    if distinct:
        args = arg.expressions
        arg = args[0] if len(args) == 1 else None
    arg = _unwrap(arg) if arg is not None else None
    if isinstance(arg, exp.Star) or arg is None:
        raise refuse(
            AGGREGATE,
            f"`{snippet(node)}` counts rows of the semantic table, which has none",
            candidates=[m for m, x in scope.model.metrics.items() if _count_metric(scope, m)],
            hint="select a count metric, e.g. MEASURE(order_count)",
        )
    if not isinstance(arg, exp.Column):
        raise unsupported(
            node,
            "an aggregate over an expression",
            hint=("aggregate one metric column, or declare the expression as a metric"),
        )
    c = scope.lookup(arg)
    if not c.is_metric:
        raise refuse(
            AGGREGATE,
            f"`{snippet(node)}` aggregates the dimension {c.group_by}; only metrics are computed",
            candidates=scope.table.metric_names(),
            hint="declare the aggregate as a metric in the model, or select a metric",
        )
    spelled = f"{wrapper}(DISTINCT)" if distinct else wrapper
    allowed = accepted_wrappers(scope.model, c.name)
    if spelled not in allowed:
        ways = [
            f"MEASURE({c.name})",
            *(
                w.replace("(DISTINCT)", "")
                + (f"(DISTINCT {c.name})" if "DISTINCT" in w else f"({c.name})")
                for w in allowed
            ),
        ]
        raise refuse(
            AGGREGATE,
            f"`{snippet(node)}` would re-aggregate {c.name}, "
            + (
                f"which aggregates with {' or '.join(allowed)}"
                if allowed
                else "which is not a plain aggregate (a ratio, expression, window or derived "
                "metric), so only MEASURE() computes it"
            ),
            candidates=ways,
            hint=f"write MEASURE({c.name}): dosi computes the metric at the query's grain",
        )
    return c.name


def _count_metric(scope: Scope, name: str) -> bool:
    m = scope.model.metrics[name]
    return (
        m.kind == "aggregate"
        and m.window is None
        and len(m.measures) == 1
        and scope.model.measures[m.measures[0]].agg in ("count", "count_star")
    )


def accepted_wrappers(model: ModelIr, name: str) -> tuple[str, ...]:
    """The aggregates that compute `name` from its own values (empty: MEASURE() only)."""
    m = model.metrics[name]
    if m.kind != "aggregate" or m.window is not None or m.lod is not None:
        return ()
    if len(m.measures) != 1:
        return ()
    return _REAGGREGATE.get(model.measures[m.measures[0]].agg, ())


def output_name(node: exp.Expression) -> str:
    """The column name PostgreSQL gives a select item: its alias, the column's name, or the
    function's name."""
    if isinstance(node, exp.Alias):
        return node.alias
    node = _unwrap(node)
    if isinstance(node, exp.Column):
        return node.name if node.this.quoted else node.name.lower()
    if isinstance(node, (exp.Cast, exp.TryCast)):
        return output_name(node.this)
    if isinstance(node, (exp.TimestampTrunc, exp.DateTrunc)):
        return "date_trunc"
    if isinstance(node, exp.Anonymous):
        return node.name.lower()
    if isinstance(node, exp.Func):
        return node.sql_name().lower()
    return "?column?"


def is_metric_time(c: VirtualColumn) -> bool:
    return c.field == METRIC_TIME
