"""The SQL renderer of each window family, keyed by the family names of THE family table
(`dosi.ext.window.families`) and checked complete against it here, at import: a family the
extension reader knows but no renderer draws, or a renderer of no family, stops the import.

A row is the family's `render(stage, metric, spec)` (one expression per window metric over
`base AS c`); when the family needs rows beside `c`, its `joins(stage, select)` (the offset
family's shifted self-joins); when it needs columns computed over `base` before the window
stage (window functions over window functions), its `source(stage, base)`: the SELECT that
`c` then reads (the streak family's gaps-and-islands pre-stage).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

from dosi.ext.window import FAMILIES, WindowSpec
from dosi.plan.records import WindowMetric
from dosi.sql.window import frame, offset, rank, share, streak, value
from dosi.sql.window.stage import WindowStageSql

Render = Callable[[WindowStageSql, WindowMetric, WindowSpec], exp.Expression]
Joins = Callable[[WindowStageSql, exp.Select], exp.Select]
Source = Callable[[WindowStageSql, exp.Expression], exp.Expression]


@dataclass(frozen=True)
class FamilySql:
    render: Render
    joins: Joins | None = None
    source: Source | None = None


FAMILY_SQL: dict[str, FamilySql] = {
    "offset": FamilySql(offset.render, offset.joins),
    "frame": FamilySql(frame.render),
    "rank": FamilySql(rank.render),
    "value": FamilySql(value.render),
    "share": FamilySql(share.render),
    "streak": FamilySql(streak.render, source=streak.pre_source),
}

if set(FAMILY_SQL) != set(FAMILIES):
    raise TypeError(
        "window families without a SQL renderer: "
        f"{sorted(set(FAMILIES) - set(FAMILY_SQL))}; renderers of no family: "
        f"{sorted(set(FAMILY_SQL) - set(FAMILIES))} (dosi.ext.window.families)"
    )
