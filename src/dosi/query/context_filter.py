"""The query key `context_filter`: a row predicate at the context layer (datus-extensions §3
D-LOD "filter placement"; CHECKLIST CORE-Q-10, LOD-FLT-01..03).

It feeds every fixed rollup's input (with `time_range`), filters the view's rows like a row
filter, and so also defines the population window metrics rank over. It may not read a D-LOD
field: it is the input of the rollup that computes that field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlglot import exp

from dosi.compiler.sqlparse import PREDICATE_LIMITS, SqlSnippetError, SqlTooComplex, parse_scalar
from dosi.errors import QueryError
from dosi.ir.lod_field import lod_refs
from dosi.ir.model import FieldIr, ModelIr
from dosi.query.filters import column_name, metric_named

Resolve = Callable[[ModelIr, str], Any]


def resolve_context(model: ModelIr, text: str, resolve_where: Resolve) -> Any:
    """`context_filter` resolved as a row filter (`resolve_where`); what it may not hold is
    `unsupported_filter`, as the reference engine reports it: nothing, a metric, a name the
    model does not have, a D-LOD field."""
    if not text.strip():
        raise QueryError(
            "unsupported_filter",
            "context_filter is empty: expected one SQL predicate",
            hint="drop the key, or write a predicate such as \"orders.channel = 'web'\"",
        )
    try:
        tree = parse_scalar(text, limits=PREDICATE_LIMITS)
    except (SqlSnippetError, SqlTooComplex):
        tree = None  # resolve_where reports it with its own code
    if tree is not None:
        for c in tree.find_all(exp.Column):
            m = metric_named(model, c)
            if m is not None:
                raise QueryError(
                    "unsupported_filter",
                    f"context_filter names metric `{m.name}`; the context layer filters rows "
                    "before any aggregate",
                    hint="filter on a metric in where_sql (a condition on the result rows)",
                )
    try:
        resolved = resolve_where(model, text)
    except QueryError as err:
        if err.code not in ("unknown_field", "ambiguous_field"):
            raise
        raise QueryError(
            "unsupported_filter",
            f"context_filter: {err.message}",
            candidates=err.candidates,
            hint=err.hint,
        ) from None
    check_context_filter(resolved.expr)
    return resolved


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
