"""`metric_time` in where_sql and context_filter (issue 21 item 2; CHECKLIST CORE-Q-07 reads
metric_time as each metric's own time axis, CORE-Q-10 the context layer).

A filter may name `metric_time`, optionally at a grain (`metric_time:month >= '2024-03-01'`,
or `metric_time__month`, the output column's spelling). Resolution leaves a placeholder
column carrying the grain; the planner binds it per branch to the metric's own time axis
(`bind_metric_time`), and the SQL renderer turns the bound value into the dialect's bucket
(`BOUND` on the node), so a grain compares the truncated value. The placeholder is typed
date/timestamp for the allow-list's type check (`metric_time > 5` is filter_type_mismatch).
"""

from __future__ import annotations

from typing import Final

from sqlglot import exp
from sqlglot.tokens import Tokenizer, TokenType

from dosi.compiler.fields import field_reference
from dosi.errors import QueryError
from dosi.ir.model import FieldIr, ModelIr
from dosi.query.calendar import check_known
from dosi.query.time_format import reject_in_where

METRIC_TIME: Final = "metric_time"
#: meta key of the placeholder (resolution): (grain or None,)
MARK: Final = "dosi_metric_time"
#: meta key of the bound axis value (planning): (grain or None, the axis's datatype or None)
BOUND: Final = "dosi_metric_time_axis"


def spell_grains(text: str) -> str:
    """`metric_time:month` and `dataset.field:month` (not SQL) as `metric_time__month` and
    `dataset.field__month`, by tokens, so a string literal holding the same characters is left
    alone."""
    try:
        tokens = Tokenizer().tokenize(text)
    except Exception:  # the parser reports what it cannot read, with its own code
        return text
    out: list[str] = []
    last = 0
    for i, (a, colon, b) in enumerate(zip(tokens, tokens[1:], tokens[2:], strict=False)):
        qualified = i >= 2 and tokens[i - 1].token_type is TokenType.DOT
        if (
            a.token_type is TokenType.VAR
            and (a.text.lower() == METRIC_TIME or qualified)
            and colon.token_type is TokenType.COLON
            and b.token_type in (TokenType.VAR, *Tokenizer.KEYWORDS.values())
            and colon.start == a.end + 1
            and b.start == colon.end + 1
            and a.start >= last
        ):
            name = a.text if qualified else METRIC_TIME
            out.append(text[last : a.start])
            out.append(f"{name}__{b.text.lower()}")
            last = b.end + 1
    out.append(text[last:])
    return "".join(out)


def metric_time_grain(model: ModelIr, col: exp.Column) -> tuple[bool, str | None]:
    """(True, grain or None) when `col` names metric_time; (False, None) otherwise."""
    if col.table:
        return False, None
    name = col.name.lower()
    if name == METRIC_TIME:
        return True, None
    if not name.startswith(METRIC_TIME + "__"):
        return False, None
    grain = name[len(METRIC_TIME) + 2 :]
    check_known(model, grain, f"{METRIC_TIME}:{grain}")
    if model.calendar.kind(grain) is None:  # a date part (dow, ...): a number, not a time
        raise QueryError(
            "unsupported_filter",
            f"`{METRIC_TIME}:{grain}` is a date part; filters compare metric_time at a grain",
            hint=f"e.g. {METRIC_TIME}:month >= '2024-03-01'",
        )
    return True, grain


def placeholder(grain: str | None) -> exp.Expression:
    out = exp.Column(this=exp.to_identifier(METRIC_TIME))
    out.meta[MARK] = (grain,)
    return out


def uses_metric_time(expr: exp.Expression | None) -> bool:
    return expr is not None and any(MARK in n.meta for n in expr.find_all(exp.Column))


def not_a_predicate() -> QueryError:
    return QueryError(
        "unsupported_filter",
        f"`{METRIC_TIME}` alone is not a predicate: it is a time value",
        hint=f"compare it, e.g. {METRIC_TIME}:month >= '2024-03-01'",
    )


def bind_metric_time(expr: exp.Expression, axis: FieldIr) -> exp.Expression:
    """The filter with metric_time read as `axis` (one branch's time field); the value keeps
    BOUND with the grain and the axis's datatype for the renderer's bucket."""
    reject_in_where(axis)  # D-FORMAT FMT-FLT-02: an encoded axis is filtered by time_range

    def bind(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column) and MARK in node.meta:
            grain = node.meta[MARK][0]
            out = field_reference(axis.qualified, axis.expr)
            out.meta[BOUND] = (grain, axis.datatype)
            return out
        return node

    return expr.transform(bind, copy=True)


def field_grain(model: ModelIr, col: exp.Column) -> tuple[FieldIr, str] | None:
    """`dataset.field__grain` (or `dataset.field:grain`) in a filter: the time field and the
    grain its bucket is compared at, any grain of the model's calendar (a calendar-table grain
    reads the day's row of the calendar). None when `col` names a field as it is, or is no
    grain spelling."""
    ds = model.datasets.get(col.table) if col.table else None
    if ds is None or col.name in ds.fields or "__" not in col.name:
        return None
    fname, _, grain = col.name.rpartition("__")
    f = ds.fields.get(fname)
    if f is None:
        return None
    spelling = f"{f.qualified}:{grain}"
    if not f.is_time:
        raise QueryError(
            "grain_on_non_time_dimension",
            f"`{spelling}` in a filter: `{f.qualified}` is not a time field, so it has no grain",
            hint=f"compare `{f.qualified}` itself",
        )
    check_known(model, grain, spelling)
    if model.calendar.kind(grain) is None:
        raise QueryError(
            "unsupported_filter",
            f"`{spelling}` is a date part; filters compare a time field at a grain",
            hint=f"e.g. {f.qualified}:month >= '2024-03-01'",
        )
    reject_in_where(f)  # D-FORMAT FMT-FLT-02
    return f, grain


def grained_reference(f: FieldIr, grain: str) -> exp.Expression:
    """The field's value, marked BOUND so the renderer compares its `grain` bucket."""
    out = field_reference(f.qualified, f.expr)
    out.meta[BOUND] = (grain, f.datatype)
    return out
