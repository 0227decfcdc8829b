"""A row-filter conjunct only some of the query's metrics can read: `where_needs_context`.

`where_sql` row conjuncts apply to every metric of the query. When one metric's rows reach a
conjunct's fields (many-to-one, or through a conformed spelling) and another metric's rows
cannot, the condition cannot mean the same thing for both: the reference engine answers
`where_needs_context` (the condition belongs in a context filter, which each part applies
only where it can) for a single condition on datasets the query does not group by, and
`no_join_path` otherwise (D-CONFORM CONF-10 for the conformed case).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from dosi.errors import QueryError
from dosi.ir.model import FieldIr, ModelIr
from dosi.query.filters import conjuncts
from dosi.query.resolve import ResolvedQuery


def where_context_error(
    model: ModelIr,
    rq: ResolvedQuery,
    blocked: list[str],
    readable: Callable[[str, FieldIr], bool],
) -> QueryError | None:
    """The error for the first row conjunct the metrics `blocked` cannot read while some
    other metric of the query can; None when there is none (the caller's join error stands).
    `readable(dataset, field)` says whether a branch over `dataset` reads `field`."""
    if rq.where is None:
        return None
    parts = conjuncts(rq.where.expr)
    if len(parts) != 1:
        return None  # several conditions: the reference answers no_join_path
    by_name = {f.qualified: f for f in rq.where.fields}
    grouped = {d.field.dataset for d in rq.dims if d.field is not None}
    owners = {m.name: [model.measures[x].dataset for x in m.measures] for m in rq.planned_metrics}
    for part in parts:
        fields = [
            by_name[q]
            for node in part.walk()
            if isinstance(node, exp.Expression)
            and (q := node.meta.get("dosi_field")) is not None
            and q in by_name
        ]
        if not fields or any(f.dataset in grouped for f in fields):
            continue  # the dataset is grouped by too: a join question, not a context one

        def reads(metric: str, fields: list[FieldIr] = fields) -> bool:
            return all(readable(d, f) for d in owners[metric] for f in fields)

        cannot = [m for m in blocked if m in owners and not reads(m)]
        can = [m for m in owners if m not in blocked and reads(m)]
        # a D-DERIVE compose whose member on another dataset reads it is the same question
        # (a metric written as one expression over two datasets stays a join question)
        composes = [m for m in cannot if model.metrics[m].derive is not None]
        members = sorted(
            {d for m in composes for d in owners[m] if all(readable(d, f) for f in fields)}
        )
        if not cannot or not (can or members):
            continue
        text = part.sql()
        ds = sorted({d for m in cannot for d in owners[m] if d not in members})
        targets = sorted({f.dataset for f in fields})
        readers = [f"`{m}`" for m in can] + [f"the members over {d}" for d in members]
        return QueryError(
            "where_needs_context",
            f"the row filter `{text}` applies to every metric of the query, but "
            + ", ".join(f"`{m}`" for m in cannot)
            + f" cannot read it (its rows, {', '.join(ds)}, reach none of "
            + f"{', '.join(targets)}), while "
            + ", ".join(readers)
            + " can",
            metrics=cannot,
            hint=f"move `{text}` to a context filter, which applies to "
            + ", ".join(can + members)
            + " and is skipped by the branches that cannot read it; or query them separately",
        )
    return None
