"""The query key `context_filter`: a row predicate at the context layer (datus-extensions §3
D-LOD "filter placement"; CHECKLIST CORE-Q-10, LOD-FLT-01..03).

It feeds every fixed rollup's input (with `time_range`), filters the view's rows like a row
filter, and so also defines the population window metrics rank over. It may not read a D-LOD
field: it is the input of the rollup that computes that field.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from dosi.errors import QueryError
from dosi.ir.lod import lod_refs
from dosi.ir.model import FieldIr
from dosi.query.filters import column_name


def check_context_filter(resolved: exp.Expression) -> None:
    """The resolved predicate (fields only: a metric has no value before aggregation) reads
    no D-LOD field (LOD-FLT-03)."""
    refs = lod_refs(resolved)
    if refs:
        raise QueryError(
            "unsupported_filter",
            f"context_filter cannot read the level-of-detail field `{refs[0]}`: the context "
            "layer scopes the rollup that computes it",
            hint="filter on its value in where_sql (a dimension filter on rollup values), or "
            "on the stored columns it is computed from here",
        )


def names_only_outputs(
    part: exp.Expression, outputs: dict[str, str], resolve_field: Callable[[str], FieldIr]
) -> bool:
    """True when a where_sql conjunct reads only ungrained group-by fields (`outputs`: their
    qualified names). Beside a window metric such a conjunct is a dimension filter on the
    result (after the window stage), as the reference engine places it; the window's
    population is the context layer's rows (context_filter, time_range)."""
    cols = list(part.find_all(exp.Column))
    if not cols or not outputs:
        return False
    for c in cols:
        if not c.table and c.name in outputs.values():
            continue
        try:
            f = resolve_field(column_name(c))
        except QueryError:
            return False
        if f.qualified not in outputs:
            return False
    return True
