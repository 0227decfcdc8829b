"""The branch SELECTs the SQL visitor (`dosi.sql.to_sql.ToSql`) assembles: a branch's dims,
time filters, joins and GROUP BY, the merge of several branches, the metric formulas, the
result filter and the final order / limit. The dialect renders the text.

Shapes:
- one branch, no window: a flat `SELECT dims, formulas FROM fact JOIN ... GROUP BY dims`;
- several branches: one CTE per branch, merged with NULL-safe FULL OUTER JOINs on the
  group-by output names, formulas evaluated over the measure columns after the merge;
- a window stage sits on top of the aggregate as further CTEs (see `dosi.sql.window`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from sqlglot import exp

from dosi.errors import QueryError
from dosi.ir.model import ModelIr
from dosi.plan.records import Branch, BranchDim, MetricColumn, TimeFilter
from dosi.plan.validity import version_time
from dosi.sql.calendar import grain_bucket
from dosi.sql.conversion import conversion_grouped
from dosi.sql.dialects import Dialect
from dosi.sql.lod_field import lod_grouped
from dosi.sql.metric_time_filter import render_metric_time
from dosi.sql.semi_additive import snapshot_join
from dosi.sql.stream_window import stream_grouped, stream_window_start
from dosi.sql.util import aliased, and_all, clone, col, cte_name, join, number, table, table_aliased
from dosi.sql.validity import join_condition

_Build = Callable[[Callable[[str], exp.Expression]], exp.Expression]


class Renderer:
    def __init__(self, model: ModelIr, dialect: Dialect) -> None:
        self.model = model
        self.dialect = dialect

    # -- pieces ------------------------------------------------------------------------------
    def dim_expr(self, d: BranchDim) -> exp.Expression:
        if d.window is not None:
            return stream_window_start(self.time_value(d), d.window, self.dialect)
        if d.time_format is not None:
            return self.decoded(d, clone(d.expr))
        if d.grain is None:
            return clone(d.expr)
        return self.bucket(clone(d.expr), d.grain, d.datatype)

    def bucket(self, expr: exp.Expression, grain: str, datatype: str | None) -> exp.Expression:
        """The grain's bucket or date part on the query's calendar (dosi.sql.calendar); a
        calendar-table grain (issue 22 item 6) is the table's column for the value's day,
        read by a scalar subquery on its one-row-per-day key."""
        cal = self.model.calendar
        if cal.table is None or cal.kind(grain) != "table":
            return grain_bucket(self.dialect, expr, grain, datatype, cal)
        if not self.dialect.groups_by_correlated_subquery:
            raise QueryError(
                "dialect_unsupported_calendar_table",
                f"the calendar-table grain `{grain}` cannot be grouped on dialect "
                f"{self.dialect.key!r}: it groups by a correlated lookup of the calendar row",
                hint="group by a native, fiscal or retail grain on this warehouse",
            )
        ds = self.model.datasets[cal.table.dataset]
        field = ds.fields[cal.table.field_of(grain) or grain]
        day = exp.Cast(this=expr, to=exp.DataType.build("DATE"))
        key = exp.EQ(this=clone(ds.fields[cal.table.date_field].expr), expression=day)
        inner = exp.select(clone(field.expr)).from_(
            table_aliased(clone(ds.source), ds.name), copy=False
        )
        return exp.Paren(this=inner.where(key, copy=False))

    def time_value(self, d: BranchDim) -> exp.Expression:
        """The dim's time value before any bucketing: decoded when stored encoded."""
        if d.time_format is None:
            return clone(d.expr)
        return self.dialect.decode_time(clone(d.expr), d.time_format)

    def decoded(self, d: BranchDim, raw: exp.Expression) -> exp.Expression:
        """D-FORMAT: the stored value decoded by the dialect (decode-time), truncated only
        when the grain is coarser than the layout's own (FMT-GRP-05)."""
        assert d.time_format is not None
        value = self.dialect.decode_time(raw, d.time_format)
        if d.grain is None or raw_grouping(d):
            return value
        return self.bucket(value, d.grain, d.datatype)

    def group_expr(self, d: BranchDim, selected: exp.Expression) -> exp.Expression:
        """What the GROUP BY names for a dim: an encoded field at its stored grain (or none)
        groups by the raw column and is parsed once per group in the SELECT (FMT-GRP-05)."""
        if d.time_format is not None and raw_grouping(d):
            return clone(d.expr)
        return clone(selected)

    def time_predicates(self, tf: TimeFilter) -> list[exp.Expression]:
        if tf.time_format is not None:
            return self.folded_predicates(tf)
        preds: list[exp.Expression] = []
        operand = self.dialect.time_operand(clone(tf.expr), tf.datatype)
        if tf.start is not None:
            bound = self.dialect.time_literal(tf.start, tf.datatype)
            lhs = clone(operand) if tf.end is not None else operand  # fresh: used once
            preds.append(exp.GTE(this=lhs, expression=bound))
        if tf.end is not None:
            bound = self.dialect.time_literal(tf.end, tf.datatype)
            preds.append(exp.LT(this=operand, expression=bound))
        return preds

    def folded_predicates(self, tf: TimeFilter) -> list[exp.Expression]:
        """D-FORMAT FMT-FLT-01: the raw column against bounds written in its stored encoding,
        never a parse of the column (partitions prune). A bound the planner moved for a window
        (FMT-GRP-04, already on the reset period's start) that falls inside a stored period
        widens to whole periods."""
        fmt = tf.time_format
        assert fmt is not None
        preds: list[exp.Expression] = []
        if tf.start is not None:
            start = _date_of(tf.start)
            bound = self.dialect.encoded_literal(fmt.encode(fmt.period_start(start)))
            preds.append(exp.GTE(this=clone(tf.expr), expression=bound))
        if tf.end is not None:
            end = _date_of(tf.end)
            if isinstance(tf.end, dt.datetime) and tf.end != dt.datetime.combine(end, dt.time()):
                end = end + dt.timedelta(days=1)
            bound = self.dialect.encoded_literal(fmt.encode(fmt.next_period_start(end)))
            preds.append(exp.LT(this=clone(tf.expr), expression=bound))
        return preds

    def from_clause(self, branch: Branch, select: exp.Select) -> exp.Select:
        ds = self.model.datasets[branch.dataset]
        select = select.from_(table_aliased(clone(ds.source), ds.name), copy=False)
        rels = [s.relationship for s in branch.joins]
        at = version_time(self.model, branch.dataset, branch.axis, rels)  # D-VALIDITY
        for r in rels:
            target = self.model.datasets[r.to_dataset]
            on = join_condition(self.model, r, at)
            select = join(
                select,
                table_aliased(clone(target.source), target.name),
                r.join_type.upper(),
                on,
            )
        if branch.semi_additive is not None:  # D-SEMI: only the snapshot rows (sql/semi_additive)
            select = snapshot_join(self, branch, select)
        preds = [render_metric_time(clone(f), self.dialect, self.bucket) for f in branch.filters]
        for tf in branch.time_filters:
            preds.extend(self.time_predicates(tf))
        where = and_all(preds)
        if where is not None:
            select = select.where(where, copy=False)
        return select

    def substitute(
        self, formula: exp.Expression, lookup: Callable[[str], exp.Expression]
    ) -> exp.Expression:
        def repl(n: exp.Expression) -> exp.Expression:
            if isinstance(n, exp.Column) and not n.table and n.name in self.model.measures:
                return lookup(n.name)
            return n

        return clone(formula).transform(repl, copy=False)

    @staticmethod
    def fill(expr: exp.Expression, m: MetricColumn) -> exp.Expression:
        if m.fill is not None:
            return exp.Coalesce(this=expr, expressions=[number(m.fill)])
        if m.zero_fill_count:
            return exp.Coalesce(this=expr, expressions=[exp.Literal.number(0)])
        return expr

    # -- shapes --------------------------------------------------------------------------------
    def flat(self, b: Branch, metrics: tuple[MetricColumn, ...], mode: str) -> exp.Select:
        """One branch: dims + metric formulas straight from the grouped rows."""
        return self.grouped(
            b,
            [
                (m.name, lambda look, m=m: self.fill(self.substitute(m.formula, look), m))
                for m in metrics
            ],
            mode,
        )

    def flat_passing(
        self, b: Branch, metrics: tuple[MetricColumn, ...], passed: tuple[str, ...], mode: str
    ) -> exp.Select:
        """`flat`, plus measure columns passed up as they are (a window stage's series)."""
        return self.grouped(
            b,
            [
                *(
                    (m.name, lambda look, m=m: self.fill(self.substitute(m.formula, look), m))
                    for m in metrics
                ),
                *((n, lambda look, n=n: look(n)) for n in passed),
            ],
            mode,
        )

    def branch_cte(self, b: Branch, mode: str) -> exp.Select:
        """One branch of a merge or a window stage: dims + its measure columns."""
        return self.grouped(b, [(n, lambda look, n=n: look(n)) for n in b.measures], mode)

    def grouped(self, b: Branch, columns: list[tuple[str, _Build]], mode: str) -> exp.Select:
        """SELECT dims, columns FROM the branch GROUP BY dims; each column builds its value
        from a measure lookup. `mode` is the plan's choice below the aggregate: "plain",
        "pre_aggregate" (grouped by the raw date first, then rolled up: docs/performance.md,
        rule 1) or "stream" (streaming windows: dosi.sql.stream_window)."""
        if mode == "stream":
            return stream_grouped(self, b, columns)
        if mode == "lod":  # D-LOD fixed fields (dosi.sql.lod_field)
            return lod_grouped(self, b, columns)
        if mode == "conversion":  # D-CONVERSION attributed events (dosi.sql.conversion)
            return conversion_grouped(self, b, columns)
        if mode == "pre_aggregate":
            return self._rolled_up(b, columns)
        sel = exp.Select()
        groups = []
        for d in b.dims:
            e = self.dim_expr(d)
            sel = sel.select(aliased(e, d.output), copy=False)
            groups.append(self.group_expr(d, e))
        for name, build in columns:
            value = build(lambda n: clone(self.model.measures[n].expr))
            sel = sel.select(aliased(value, name), copy=False)
        sel = self.from_clause(b, sel)
        if groups:
            sel = sel.group_by(*groups, copy=False)
        if self.dialect.pre_aggregate_count_guard and _lone_date_key(b):
            sel = sel.having(_count_guard(), copy=False)  # a no-op that pays (issue 27 item 4)
        return sel

    def _rolled_up(self, b: Branch, columns: list[tuple[str, _Build]]) -> exp.Select:
        inner = exp.Select()
        inner_groups = []
        raw_names: dict[str, str] = {}
        for i, d in enumerate(b.dims):
            name = d.output if d.grain is None else f"__t{i}"
            raw_names[d.output] = name
            inner = inner.select(aliased(clone(d.expr), name), copy=False)
            inner_groups.append(clone(d.expr))
        for m in b.measures:
            inner = inner.select(aliased(clone(self.model.measures[m].expr), m), copy=False)
        inner = self.from_clause(b, inner)
        if inner_groups:
            inner = inner.group_by(*inner_groups, copy=False)
        if len(inner_groups) == 1 and self.dialect.pre_aggregate_count_guard:
            inner = inner.having(_count_guard(), copy=False)  # a no-op that pays
        outer = exp.Select()
        groups = []
        for d in b.dims:
            raw = col(raw_names[d.output], _PRE)
            if d.time_format is not None:  # D-FORMAT: decoded once per pre-aggregated group
                e = self.decoded(d, raw)
            else:
                e = raw if d.grain is None else self.bucket(raw, d.grain, d.datatype)
            outer = outer.select(aliased(e, d.output), copy=False)
            groups.append(clone(e))

        def rolled(n: str) -> exp.Expression:
            agg = self.model.measures[n].agg
            out: exp.Expression = ROLLUP[agg](this=col(n, _PRE))
            if agg in ("count", "count_star"):  # a count stays an integer, as COUNT is
                out = exp.Cast(this=out, to=_BIGINT.copy())
            return out

        for name, build in columns:
            outer = outer.select(aliased(build(rolled), name), copy=False)
        outer = outer.from_(table_aliased(exp.Subquery(this=inner), _PRE), copy=False)
        return outer.group_by(*groups, copy=False)

    def merged(
        self,
        dims: tuple[str, ...],
        inputs: list[tuple[str, exp.Select]],
        metrics: tuple[MetricColumn, ...],
        keyed: bool,
        ids: list[str] | None = None,
        taken: tuple[tuple[str, str], ...] = (),
    ) -> exp.Select:
        """Branches (id, CTE body) merged on the group-by output names, NULL-safe (S-FAN-3):
        a chain of FULL OUTER JOINs, or (`keyed`, the plan's `union_keys` strategy where the
        dialect cannot FULL JOIN on IS NOT DISTINCT FROM) the UNION of the branch keys LEFT
        JOINed to every branch. `inputs` are the CTEs in order; `ids` the ones merged (all by
        default); `taken` columns (name, branch id) passed up as they are (a window stage's
        series)."""
        if ids is None:
            ids = [bid for bid, _ in inputs]
        sel = exp.Select()
        for d in dims:
            key: exp.Expression = (
                col(d, _KEYS)
                if keyed
                else exp.Coalesce(this=col(d, ids[0]), expressions=[col(d, i) for i in ids[1:]])
            )
            sel = sel.select(aliased(key, d), copy=False)
        for m in metrics:
            where = dict(m.sources)
            e = self.substitute(m.formula, lambda n, w=where: col(n, w[n]))
            sel = sel.select(aliased(self.fill(e, m), m.name), copy=False)
        for name, bid in taken:
            sel = sel.select(aliased(col(name, bid), name), copy=False)
        if keyed:
            sel = sel.from_(table(_KEYS), copy=False)
            for bid in ids:
                on = and_all(
                    [exp.NullSafeEQ(this=col(d, _KEYS), expression=col(d, bid)) for d in dims]
                )
                sel = join(sel, table(bid), "LEFT", on)
        else:
            sel = sel.from_(table(ids[0]), copy=False)
        for i, bid in enumerate(ids[1:], start=1):
            if keyed:
                break
            if dims:
                conds = []
                for d in dims:
                    left: exp.Expression = (
                        col(d, ids[0])
                        if i == 1
                        else exp.Coalesce(
                            this=col(d, ids[0]), expressions=[col(d, x) for x in ids[1:i]]
                        )
                    )
                    conds.append(exp.NullSafeEQ(this=left, expression=col(d, bid)))
                sel = join(sel, table(bid), "FULL OUTER", and_all(conds))
            else:
                sel = join(sel, table(bid), "CROSS")
        for bid, body in inputs:
            sel = sel.with_(cte_name(bid), as_=body, copy=False)
        if keyed:
            union: exp.Expression | None = None
            for bid in ids:
                part = exp.Select().select(*(col(d) for d in dims), copy=False)
                part = part.from_(table(bid), copy=False)
                union = (
                    part if union is None else exp.Union(this=union, expression=part, distinct=True)
                )
            sel = sel.with_(cte_name(_KEYS), as_=union, copy=False)
        return sel

    def filtered(
        self, sel: exp.Select, outputs: tuple[str, ...], predicate: exp.Expression
    ) -> exp.Select:
        """The aggregate as a `result_rows` CTE, its rows kept by the metric filter and its
        columns cut to the outputs (a metric computed only for the filter is dropped)."""
        ctes = sel.args.get("with_")
        sel.set("with_", None)
        out = exp.Select().select(*(col(o) for o in outputs), copy=False)
        out = out.from_(table(RESULT_ROWS), copy=False).where(clone(predicate), copy=False)
        for cte in ctes.expressions if ctes is not None else ():
            out = out.with_(cte_name(cte.alias), as_=cte.this, copy=False)
        return out.with_(cte_name(RESULT_ROWS), as_=sel, copy=False)

    def finish(
        self,
        sel: exp.Select,
        order: tuple[tuple[str, bool, str | None], ...],
        limit: int | None,
    ) -> exp.Select:
        keys = []
        for key, desc, nulls in order:
            # NULLs sort last unless the caller says otherwise, on every dialect, so a limit
            # keeps the same rows wherever the SQL runs
            keys.extend(self.dialect.ordered(col(key), desc, nulls or "last"))
        if keys:
            sel = sel.order_by(*keys, copy=False)
        if limit is not None:
            sel.set("limit", exp.Limit(expression=number(limit)))  # built, not parsed
        return sel


def raw_grouping(d: BranchDim) -> bool:
    """An encoded dim with no grain or its layout's own grain: grouping by the raw value
    groups exactly as grouping by the decoded one (FMT-GRP-05)."""
    fmt = d.time_format
    return fmt is not None and (d.grain is None or d.grain == fmt.derived_grain)


def _date_of(value: dt.date | dt.datetime) -> dt.date:
    return value.date() if isinstance(value, dt.datetime) else value


RESULT_ROWS = "result_rows"
_PRE = "pre"
_BIGINT = exp.DataType.build("BIGINT")
_KEYS = "merge_keys"
# measures whose per-day partial aggregates roll up exactly (COUNT DISTINCT / AVG do not)
ROLLUP: dict[str, type[exp.Expression]] = {
    "sum": exp.Sum,
    "count": exp.Sum,
    "count_star": exp.Sum,
    "min": exp.Min,
    "max": exp.Max,
}


def _lone_date_key(b: Branch) -> bool:
    """One aggregate grouped by a Date field's day alone: the GROUP BY DuckDB runs twice as
    fast with a COUNT(*) beside it (Dialect.pre_aggregate_count_guard), as at the day
    pre-aggregation. Measured on 10M orders: a day-grain running total 170 -> 115 ms. With
    a second aggregate, or any other key, the extra count measured slower."""
    if len(b.dims) != 1 or len(b.measures) != 1:
        return False
    d = b.dims[0]
    return d.grain == "day" and d.datatype == "Date" and d.window is None and d.time_format is None


def _count_guard() -> exp.Expression:
    """HAVING COUNT(*) > 0: keeps every group (see Dialect.pre_aggregate_count_guard)."""
    return exp.GT(this=exp.Count(this=exp.Star()), expression=exp.Literal.number(0))
