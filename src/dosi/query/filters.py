"""Splitting `where_sql` into its two levels: row filters and metric (result) filters.

A top-level AND conjunct that names a metric filters the query's result rows, after
aggregation and after the window stage (HAVING semantics, as the reference engine does);
every other conjunct is a row filter applied before aggregation. A conjunct that names a metric
may also read group-by fields, which are result columns by then; a field the result does not
hold exists only before aggregation, so mixing it with a metric (under OR, say) is
`result_filter_unprojected`.

This module only classifies and resolves names; what SQL a conjunct may contain is checked by
the where_sql validation in `dosi.query.resolve`, which runs on every conjunct of both levels.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

from dosi.compiler.fields import ident
from dosi.compiler.sqlparse import strip_parens
from dosi.errors import QueryError
from dosi.ir.model import FieldIr, MetricIr, ModelIr


@dataclass(frozen=True)
class ResultFilter:
    """The metric-level conjuncts over result columns (metrics and ungrained group-by
    outputs); `metrics` are the metrics they name, selected or not."""

    expr: exp.Expression  # columns are bare output-column identifiers
    metrics: tuple[MetricIr, ...]
    text: str  # as the caller wrote it (for explain and errors)


def conjuncts(tree: exp.Expression) -> list[exp.Expression]:
    """The top-level AND operands of a predicate, parentheses around them dropped (walked
    without recursion: an AND chain can be thousands of conjuncts long)."""
    out: list[exp.Expression] = []
    stack = [tree]
    while stack:
        node = strip_parens(stack.pop())
        if isinstance(node, exp.And):
            stack.extend((node.expression, node.this))  # left operand first
        else:
            out.append(node)
    return out


def column_name(col: exp.Column) -> str:
    return f"{col.table}.{col.name}" if col.table else col.name


def metric_named(model: ModelIr, col: exp.Column) -> MetricIr | None:
    """The metric an unqualified column names; a field of the same name wins (as before)."""
    if col.table or col.args.get("db") or col.args.get("catalog"):
        return None
    m = model.metrics.get(col.name)
    if m is None or any(col.name in d.fields for d in model.datasets.values()):
        return None
    return m


def names_metric(model: ModelIr, node: exp.Expression) -> bool:
    return any(metric_named(model, c) is not None for c in node.find_all(exp.Column))


def result_filter(
    model: ModelIr,
    parts: list[exp.Expression],
    outputs: dict[str, str],
    resolve_field: Callable[[str], FieldIr],
) -> ResultFilter:
    """Rewrite metric-level conjuncts over result columns.

    `outputs` maps a group-by field's qualified name to its output column (ungrained items
    only); `resolve_field(name)` finds a field (raising unknown_field / ambiguous_field)."""
    metrics: dict[str, MetricIr] = {}
    texts: list[str] = []
    rewritten: list[exp.Expression] = []
    for part in parts:
        texts.append(part.sql())
        part = part.copy()
        metric_parts: list[str] = []
        unprojected: list[str] = []
        for col in list(part.find_all(exp.Column)):
            m = metric_named(model, col)
            if m is not None:
                metrics.setdefault(m.name, m)
                metric_parts.append(m.name)
                repl = exp.Column(this=ident(m.name))
            else:
                f: FieldIr = resolve_field(column_name(col))
                out = outputs.get(f.qualified)
                if out is None:
                    unprojected.append(f.qualified)
                    continue
                repl = exp.Column(this=ident(out))
            if col is part:
                part = repl
            else:
                col.replace(repl)
        if unprojected:
            field = unprojected[0]
            raise QueryError(
                "result_filter_unprojected",
                f"where_sql condition `{texts[-1]}` names metric `{metric_parts[0]}`, which "
                f"exists only after aggregation, and field `{field}`, which the query does not "
                "group by and so exists only before it",
                candidates=[field],
                hint=f'group by "{field}", or move the condition on it into a separate AND '
                "conjunct (a row filter)",
            )
        rewritten.append(part)
    expr = rewritten[0]
    for p in rewritten[1:]:
        expr = exp.And(this=_paren_or(expr), expression=_paren_or(p))
    return ResultFilter(expr, tuple(metrics.values()), " AND ".join(texts))


def _paren_or(node: exp.Expression) -> exp.Expression:
    return exp.Paren(this=node) if isinstance(node, exp.Or) else node
