"""Percentile aggregates rendered for the target dialect (issue 21 item 5): each canonical
node of dosi.ir.percentile in the statement becomes the dialect's own computation
(dosi.sql.dialects.percentile); a dialect without one is refused with
`dialect_unsupported_percentile` before any SQL text exists."""

from __future__ import annotations

from sqlglot import exp

from dosi.errors import QueryError
from dosi.ir.model import ModelIr
from dosi.ir.percentile import PERCENTILE_AGGS, PERCENTILE_NODES, method_of, quantile_of, written
from dosi.sql.dialects import Dialect


def render_percentiles(model: ModelIr, tree: exp.Expression, dialect: Dialect) -> exp.Expression:
    """`tree` with its percentile nodes in the dialect's form (the tree itself when the model
    has none: no walk on the common path)."""
    if not any(m.agg in PERCENTILE_AGGS for m in model.measures.values()):
        return tree
    if not any(True for _ in tree.find_all(*PERCENTILE_NODES)):
        return tree
    if dialect.percentile_style is None:
        node = next(tree.find_all(*PERCENTILE_NODES))
        raise QueryError(
            "dialect_unsupported_percentile",
            f"{dialect.key} has no percentile aggregate, so `{written(node)}` cannot be "
            "computed there",
            hint="query this metric on DuckDB, PostgreSQL, ClickHouse, Spark or DataFusion, "
            "or precompute it in the dataset SQL",
        )

    def one(node: exp.Expression) -> exp.Expression:
        if not isinstance(node, PERCENTILE_NODES):
            return node
        return dialect.percentile(node.this, quantile_of(node), method_of(node))

    return tree.transform(one, copy=False)
