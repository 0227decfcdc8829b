"""Looker filter expressions (a filtered measure's `filters: [field: "value"]`) -> predicates.

Carried: `Yes` / `No` on yesno fields; `NULL`, `-NULL`, `EMPTY`, `-EMPTY`; for numbers
`5`, `NOT 5`, `>5`, `>=5`, `<5`, `<=5`, `5 to 10` (inclusive), `[5, 10)` style intervals and
comma lists; for strings comma lists of values, `-value` to exclude (NULLs stay, as in
Looker), `%` / `_` wildcards (LIKE). Date expressions (`28 days`, `this month`, `before 2020-01-01`) are relative to the
moment of the query or need Looker's calendar, so they raise `FilterNotCarried`, as does
anything with `^` escapes.
"""

from __future__ import annotations

import re
from functools import reduce

from sqlglot import exp


class FilterNotCarried(ValueError):
    """A filter expression this translation does not carry; the message names it."""


_NUMBER = r"-?\d+(?:\.\d+)?"
_COMPARE = re.compile(rf"^(>=|<=|!=|<>|>|<|=)\s*({_NUMBER})$")
_RANGE = re.compile(rf"^({_NUMBER})\s+to\s+({_NUMBER})$", re.I)
_INTERVAL = re.compile(rf"^([\[(])\s*({_NUMBER})?\s*,\s*({_NUMBER})?\s*([\])])$")
_NOT = re.compile(rf"^(?:NOT|-)\s*({_NUMBER})$", re.I)
_DATE_WORDS = re.compile(
    r"\b(day|days|week|weeks|month|months|year|years|quarter|quarters|hour|hours|minute|"
    r"minutes|ago|today|yesterday|tomorrow|before|after|this|last|next|now)\b",
    re.I,
)


def _num(text: str) -> exp.Expression:
    return exp.Literal.number(text)


def _ors(parts: list[exp.Expression]) -> exp.Expression:
    return reduce(lambda a, b: exp.or_(a, b), parts)


def _ands(parts: list[exp.Expression]) -> exp.Expression:
    return reduce(lambda a, b: exp.and_(a, b), parts)


def _number_item(target: exp.Expression, item: str) -> exp.Expression:
    item = item.strip()
    if re.fullmatch(_NUMBER, item):
        return exp.EQ(this=target.copy(), expression=_num(item))
    m = _NOT.match(item)
    if m:
        return exp.NEQ(this=target.copy(), expression=_num(m.group(1)))
    m = _COMPARE.match(item)
    if m:
        ops = {">": exp.GT, ">=": exp.GTE, "<": exp.LT, "<=": exp.LTE, "=": exp.EQ}
        op = ops.get(m.group(1), exp.NEQ)
        return op(this=target.copy(), expression=_num(m.group(2)))
    m = _RANGE.match(item)
    if m:
        return exp.Between(this=target.copy(), low=_num(m.group(1)), high=_num(m.group(2)))
    m = _INTERVAL.match(item)
    if m:
        parts = []
        if m.group(2) is not None:
            op = exp.GTE if m.group(1) == "[" else exp.GT
            parts.append(op(this=target.copy(), expression=_num(m.group(2))))
        if m.group(3) is not None:
            op = exp.LTE if m.group(4) == "]" else exp.LT
            parts.append(op(this=target.copy(), expression=_num(m.group(3))))
        if parts:
            return _ands(parts)
    raise FilterNotCarried(f"number filter {item!r}")


def _split(text: str) -> list[str]:
    if "^" in text:
        raise FilterNotCarried(f"escaped filter {text!r}")
    return [p.strip() for p in text.split(",") if p.strip()]


def predicate(
    target: exp.Expression, text: str, *, yesno: bool = False, number: bool = False
) -> exp.Expression:
    """The predicate the Looker filter expression `text` applies to `target`."""
    value = str(text).strip()
    upper = value.upper()
    if upper in ("NULL", "-NULL", "NOT NULL"):
        null = exp.Is(this=target.copy(), expression=exp.Null())
        return null if upper == "NULL" else exp.Not(this=null)
    if upper in ("EMPTY", "-EMPTY"):
        empty = exp.or_(
            exp.Is(this=target.copy(), expression=exp.Null()),
            exp.EQ(this=target.copy(), expression=exp.Literal.string("")),
        )
        return empty if upper == "EMPTY" else exp.Not(this=exp.Paren(this=empty))
    if yesno:
        if upper in ("YES", "TRUE"):
            return exp.EQ(this=target.copy(), expression=exp.true())
        if upper in ("NO", "FALSE"):
            return exp.EQ(this=target.copy(), expression=exp.false())
        raise FilterNotCarried(f"yesno filter {value!r}")
    if number:
        items = _split(value) if not _INTERVAL.match(value) else [value]
        return _ors([_number_item(target, i) for i in items])
    if _DATE_WORDS.search(value) and re.search(r"\d|\b(this|last|next|today)\b", value, re.I):
        raise FilterNotCarried(f"date filter {value!r} (relative to the query's time)")
    positives: list[exp.Expression] = []
    negatives: list[exp.Expression] = []
    for item in _split(value):
        negate = item.startswith("-")
        word = item[1:] if negate else item
        lit = exp.Literal.string(word)
        if "%" in word or "_" in word:
            test: exp.Expression = exp.Like(this=target.copy(), expression=lit)
        else:
            test = exp.EQ(this=target.copy(), expression=lit)
        if negate:  # Looker's "is not" keeps the NULL rows
            null = exp.Is(this=target.copy(), expression=exp.Null())
            negatives.append(exp.Paren(this=exp.or_(exp.Not(this=test), null)))
        else:
            positives.append(test)
    parts = []
    if positives:
        parts.append(exp.Paren(this=_ors(positives)) if len(positives) > 1 else positives[0])
    if negatives:
        parts += negatives
    if not parts:
        raise FilterNotCarried(f"empty filter {value!r}")
    return _ands(parts)
