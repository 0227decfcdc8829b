"""Row counts inside a D-DERIVE compose (issue 21 item 4): `COUNT(*)`, `COUNT(1)`, `SUM(1)`
read no column, so a compose over two pinned row counts (`refund_rows / order_rows`, each with
its D-DATASET `dataset`) has, in its written expansion, aggregates nothing in the SQL places.
Each takes the owning dataset of the member it expands: the k-th column-less aggregate of a
given spelling, left to right, is the k-th member aggregate of that spelling, members read left
to right in the compose's `expr`. Members are the metrics compiled before the compose (document
order), as the D-DERIVE gate reads them."""

from __future__ import annotations

from sqlglot import exp

from dosi.compiler.metric_scope import MetricScope
from dosi.compiler.sqlparse import SqlSnippetError, SqlTooComplex, parse_scalar
from dosi.ext.derive import ComposeDerive


def member_owners(scope: MetricScope, decl: object, unowned: list[exp.AggFunc]) -> dict[int, str]:
    """id(aggregate) -> its member's dataset, for the column-less aggregates a compose's
    members explain; empty when `decl` is not a compose or nothing matches."""
    if not isinstance(decl, ComposeDerive) or not unowned:
        return {}
    try:
        names = [
            c.name for c in parse_scalar(decl.expr).walk(bfs=False) if isinstance(c, exp.Column)
        ]
    except (SqlSnippetError, SqlTooComplex):  # the D-DERIVE reader reports it
        return {}
    offered: list[tuple[str, str]] = []  # (aggregate spelling, owner), left to right
    for name in names:
        member = scope.compiled.get(name)
        if member is None:
            continue
        for measure in member.measures:
            ir = scope.registry.measures.get(measure)
            if ir is not None:
                offered.append((ir.expr.sql(), ir.dataset))
    out: dict[int, str] = {}
    used: set[int] = set()
    for agg in unowned:
        text = agg.sql()
        for i, (spelled, owner) in enumerate(offered):
            if i not in used and spelled == text:
                used.add(i)
                out[id(agg)] = owner
                break
    return out
