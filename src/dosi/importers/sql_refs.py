"""Member references inside a source tool's SQL, resolved on sqlglot trees.

Cube writes `{CUBE}.col`, `{CUBE.member}`, `{member}`, `{cube.member}` (JavaScript models and
older YAML add a `$`); LookML writes `${TABLE}.col`, `${field}`, `${view.field}`. Each
reference is swapped for a unique placeholder identifier, the text is parsed once with
sqlglot (in the source warehouse's dialect), and every placeholder is then replaced by the
tree its resolver returns. Nothing is pasted back together as text: the result is a tree,
rendered by sqlglot.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import sqlglot
from sqlglot import exp

_TOKEN = "__dosi_ref_{}__"
_TOKEN_RE = re.compile(r"__dosi_ref_(\d+)__")


class RefError(ValueError):
    """A reference the resolver cannot carry, or SQL that does not parse."""


@dataclass(frozen=True)
class Ref:
    """One reference: its dotted text (`CUBE`, `CUBE.amount`, `orders.count`, `TABLE`)."""

    text: str

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(self.text.split("."))


#: `resolve(ref, column)`: the tree a reference stands for; `column` is the name after it when
#: the reference is used as a table qualifier (`{CUBE}.amount` -> ref CUBE, column amount).
Resolver = Callable[[Ref, str | None], exp.Expression]


def tokenize(sql: str, pattern: re.Pattern[str]) -> tuple[str, list[Ref]]:
    """`sql` with each match of `pattern` (group 1 = the dotted reference) replaced by a
    placeholder identifier, and the references in order."""
    refs: list[Ref] = []

    def swap(m: re.Match[str]) -> str:
        refs.append(Ref(m.group(1).strip()))
        return _TOKEN.format(len(refs) - 1)

    return pattern.sub(swap, sql), refs


def parse(sql: str, dialect: str | None) -> exp.Expression:
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError) as err:
        raise RefError(f"the SQL does not parse: {str(err).splitlines()[0][:200]}") from None
    if tree is None:
        raise RefError("the SQL is empty")
    return tree


def ref_of(name: str, refs: list[Ref]) -> Ref | None:
    """The reference a placeholder identifier from `tokenize` stands for (None: no placeholder)."""
    m = _TOKEN_RE.fullmatch(name)
    return refs[int(m.group(1))] if m else None


def resolve(
    sql: str,
    pattern: re.Pattern[str],
    resolver: Resolver,
    dialect: str | None = None,
    raw: Callable[[exp.Column], exp.Expression] | None = None,
) -> exp.Expression:
    """The tree of `sql` with every reference resolved. `raw(column)` maps a column that is
    no reference (a bare source column, e.g. Cube's `sql: amount`); by default it stays."""
    text, refs = tokenize(sql, pattern)
    tree = parse(text, dialect)

    def swap(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column):
            table_ref = ref_of(node.table, refs) if node.table else None
            if table_ref is not None:
                return resolver(table_ref, node.name)
            ref = ref_of(node.name, refs)
            if ref is not None and not node.table:
                return resolver(ref, None)
            if ref is None and raw is not None:
                return raw(node)
        elif isinstance(node, (exp.Identifier, exp.Table)) and _TOKEN_RE.search(node.sql()):
            raise RefError(f"a reference is used where a value is expected: {sql[:120]!r}")
        return node

    out = tree.transform(swap, copy=True)
    if _TOKEN_RE.search(out.sql()):
        raise RefError(f"a reference is used where a value is expected: {sql[:120]!r}")
    return out


def paren(tree: exp.Expression) -> exp.Expression:
    """`tree` wrapped in parentheses unless it is atomic (a column, literal or call)."""
    if isinstance(tree, (exp.Column, exp.Literal, exp.Func, exp.Paren, exp.Null, exp.Boolean)):
        return tree
    return exp.Paren(this=tree)


def render(tree: exp.Expression) -> str:
    """The tree as the model's ANSI SQL text (sqlglot's portable rendering)."""
    return tree.sql()


def over_metrics(
    sql: str,
    pattern: re.Pattern[str],
    dialect: str | None,
    metric_of: Callable[[Ref], str | None],
) -> str | None:
    """`sql` with every reference replaced by the metric `metric_of` names for it (a D-DERIVE
    compose over measures), or None when it reads anything but measures."""
    text, refs = tokenize(sql, pattern)
    try:
        tree = parse(text, dialect)
    except RefError:
        return None

    def swap(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column):
            ref = ref_of(node.name, refs) if not node.table else None
            name = metric_of(ref) if ref else None
            if name is None:
                raise RefError("not a measure")
            return exp.column(name)
        return node

    try:
        return render(tree.transform(swap, copy=True))
    except RefError:
        return None


def has_aggregate(tree: exp.Expression) -> bool:
    return any(isinstance(n, exp.AggFunc) for n in tree.walk())


def columns(tree: exp.Expression) -> list[exp.Column]:
    return [n for n in tree.walk() if isinstance(n, exp.Column)]
