"""WHERE and HAVING of a semantic SQL query as the dosi query's filters.

Each top-level AND conjunct lands in one place: comparisons of a time column with constants
fold into `time_range`; anything else is rewritten over dosi names (`orders.channel`, metric
names, `DATE_TRUNC('month', orders.order_date)` for a grained column) and joins `where_sql`,
where dosi's allow-list and type checks apply unchanged and a conjunct naming a metric is a
metric filter.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.optimizer.simplify import simplify

from dosi.query.filters import conjuncts
from dosi.query.semantic_sql import time_filters as tf
from dosi.query.semantic_sql.errors import UNSUPPORTED, refuse, snippet, unsupported
from dosi.query.semantic_sql.items import Scope, is_metric_time, metric
from dosi.query.semantic_sql.shape import VirtualColumn
from dosi.query.semantic_sql.time_filters import TimeRange


@dataclass
class Filters:
    """What WHERE and HAVING became: one range per time field, the where_sql conjuncts,
    and whether a constant FALSE made the result empty."""

    ranges: dict[str, TimeRange] = field(default_factory=dict)  # field ("metric_time" or
    # "orders.order_date") -> range
    parts: list[str] = field(default_factory=list)
    empty: bool = False

    def time_range(self) -> tuple[dict[str, str] | None, list[str]]:
        """The dosi `time_range` (metric_time first, else the first field constrained) and
        the other fields' ranges as where_sql conjuncts."""
        chosen: dict[str, str] | None = None
        extra: list[str] = []
        order = sorted(self.ranges, key=lambda f: f != "metric_time")
        for i, name in enumerate(order):
            r = self.ranges[name]
            bounds = {
                k: tf.bound_text(v)
                for k, v in (("start", r.start), ("end", r.end))
                if v is not None
            }
            if i == 0:
                chosen = {**bounds, **({} if name == "metric_time" else {"dimension": name})}
                continue
            if "start" in bounds:
                extra.append(f"{name} >= '{bounds['start']}'")
            if "end" in bounds:
                extra.append(f"{name} < '{bounds['end']}'")
        return chosen, extra


def collect(scope: Scope, where: exp.Expression | None, having: exp.Expression | None) -> Filters:
    out = Filters()
    if where is not None:
        for part in conjuncts(where.this):
            _one(scope, part, out, having=False)
    if having is not None:
        for part in conjuncts(having.this):
            _one(scope, part, out, having=True)
    return out


def _one(scope: Scope, part: exp.Expression, out: Filters, having: bool) -> None:
    if not any(True for _ in part.find_all(exp.Column)):
        value = simplify(part.copy())
        if isinstance(value, exp.Boolean):
            out.empty = out.empty or not value.this
            return
        if isinstance(value, exp.Null):
            out.empty = True
            return
        raise unsupported(part, "a condition that reads no column")
    if not having and _time_conjunct(scope, part, out):
        return
    out.parts.append(_rewrite(scope, part.copy()).sql())


def _time_column(scope: Scope, node: exp.Expression) -> VirtualColumn | None:
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, (exp.Cast, exp.TryCast)) and node.to.this in (
        exp.DataType.Type.DATE,
        exp.DataType.Type.TIMESTAMP,
    ):
        node = node.this
    if not isinstance(node, exp.Column):
        return None
    c = scope.lookup(node)
    return c if c.is_time and not c.is_metric else None


def _time_conjunct(scope: Scope, part: exp.Expression, out: Filters) -> bool:
    """Fold `time_col op constant` (either way round) or `time_col BETWEEN a AND b`."""
    found: list[tuple[VirtualColumn, TimeRange]] = []
    if isinstance(part, exp.Between):
        c = _time_column(scope, part.this)
        lo = tf.literal_time(part.args["low"]) if c is not None else None
        hi = tf.literal_time(part.args["high"]) if c is not None else None
        if c is None or lo is None or hi is None:
            return _refuse_metric_time(scope, part)
        grain = _grain(c)
        found.append((c, tf.compare(">=", lo, grain).meet(tf.compare("<=", hi, grain))))
    else:
        cmp = tf.comparison(part)
        if cmp is None:
            return _refuse_metric_time(scope, part)
        left, op, right = cmp
        c = _time_column(scope, left)
        if c is None:
            c, left, right, op = _time_column(scope, right), right, left, tf.flipped(op)
        value = tf.literal_time(right) if c is not None else None
        if c is None or value is None:
            return _refuse_metric_time(scope, part)
        found.append((c, tf.compare(op, value, _grain(c))))
    for c, r in found:
        prior = out.ranges.get(c.field)
        merged = r if prior is None else prior.meet(r)
        out.ranges[c.field] = merged
        out.empty = out.empty or merged.empty
    return True


def _grain(c: VirtualColumn) -> str | None:
    if c.grain is not None:
        return c.grain
    return None if c.datatype == "DateTime" else "day"


def _refuse_metric_time(scope: Scope, part: exp.Expression) -> bool:
    for col in part.find_all(exp.Column):
        c = scope.lookup(col)
        if is_metric_time(c):
            raise refuse(
                UNSUPPORTED,
                f"`{snippet(part)}`: metric_time can only be compared with constant dates "
                "(=, <, <=, >, >=, BETWEEN), conditions joined by AND",
                hint="compare metric_time with literals, or filter a dataset's own time field",
            )
    return False


def _rewrite(scope: Scope, node: exp.Expression) -> exp.Expression:
    """Virtual columns and metric expressions as dosi names, bottom-up."""

    def swap(n: exp.Expression) -> exp.Expression:
        name = metric(scope, n)
        if name is not None:
            return exp.column(name)
        if isinstance(n, exp.Column):
            c = scope.lookup(n)
            dataset, _, fname = c.field.partition(".")
            col = exp.column(fname, table=dataset, quoted=False)
            if c.grain is None:
                return col
            return exp.Anonymous(this="DATE_TRUNC", expressions=[exp.Literal.string(c.grain), col])
        return n

    return node.transform(swap, copy=False)
