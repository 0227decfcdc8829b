"""`min_max_only` on a query without metrics (docs/dimension-only-queries.md): the distinct
detail query wrapped in one aggregate row, MIN and MAX of each of its columns.

The range is taken over the distinct rows the plain dimension-only query answers (so a bucketed
time field gives its first and last bucket, and a NULL-only column NULL), which is what a BI
tool asks to size a date picker or a slider.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp


def min_max_select(tree: exp.Select, columns: Sequence[tuple[str, str]]) -> exp.Select:
    """`SELECT MIN(c) AS <out>__min, MAX(c) AS <out>__max ... FROM (tree)`: `columns` are the
    detail query's column names with the output name each one answers under."""
    sub = tree.subquery("dosi_values")
    outs: list[exp.Expression] = []
    for column, out in columns:
        ref = exp.column(exp.to_identifier(column, quoted=True), table="dosi_values")
        outs.append(exp.alias_(exp.Min(this=ref.copy()), f"{out}__min", quoted=True))
        outs.append(exp.alias_(exp.Max(this=ref), f"{out}__max", quoted=True))
    return exp.select(*outs).from_(sub)


def min_max_columns(columns: Sequence[str]) -> list[str]:
    """The result's column names, in order: `<out>__min`, `<out>__max` per grouped column."""
    return [f"{c}__{side}" for c in columns for side in ("min", "max")]
