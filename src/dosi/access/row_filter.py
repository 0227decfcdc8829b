"""Row filters: a policy's `orders.region = {user.region}` as a checked sqlglot predicate.

The text is the policy author's; `{user.<attr>}` placeholders are parsed as references and
bound to the user's attribute values as typed literals (a string literal, a number, a
boolean; a list expands an `IN`), never pasted into the text. Every column must name a field
of one dataset; only comparisons, IN, BETWEEN, IS [NOT] NULL, LIKE, AND / OR / NOT and
literals are allowed (issue 30 item 2)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from dosi.access.identity import UserContext
from dosi.access.row_path import through_path
from dosi.errors import AccessError
from dosi.ir.model import FieldIr, ModelIr

_PLACEHOLDER = re.compile(r"\{\s*user\.([A-Za-z_][A-Za-z0-9_]*)\s*\}")
_USER_TABLE = "__dosi_user__"
_ALLOWED = (
    exp.Column,
    exp.Identifier,
    exp.Literal,
    exp.Boolean,
    exp.Null,
    exp.Paren,
    exp.Tuple,
    exp.And,
    exp.Or,
    exp.Not,
    exp.EQ,
    exp.NEQ,
    exp.GT,
    exp.GTE,
    exp.LT,
    exp.LTE,
    exp.In,
    exp.Between,
    exp.Is,
    exp.Like,
    exp.ILike,
    exp.Neg,
)
_NUMERIC = frozenset({"Integer", "Decimal", "Float", "Double", "Number", "BigInt", "Numeric"})
_TEXT = frozenset({"String", "Text", "Varchar"})


@dataclass(frozen=True)
class RowFilter:
    """One compiled filter: the dataset it restricts and its predicate over the dataset's
    columns (qualified by the dataset name, as the IR's field expressions are)."""

    policy: str
    dataset: str
    predicate: exp.Expression


def _error(code: str, policy: str, message: str, hint: str) -> AccessError:
    return AccessError(code, f"policy `{policy}`: {message}", hint=hint, detail={"policy": policy})


def compile_row_filter(
    model: ModelIr, policy: str, text: str, user: UserContext, target: str | None = None
) -> RowFilter:
    """The filter for `user`; a filter that does not parse, names no or several datasets, an
    unknown field or a missing attribute is an AccessError (the user gets no answer). With
    `target`, the filter restricts that dataset through its many-to-one path to the dataset
    the filter names (`dosi.access.row_path`)."""
    fix = "fix the row filter in the access file (docs/access-policies.md)"
    try:
        tree = sqlglot.parse_one(_PLACEHOLDER.sub(rf"({_USER_TABLE}.\1)", text), read="duckdb")
    except sqlglot.errors.SqlglotError:
        raise _error(
            "access_policy_invalid", policy, f"row filter {text!r} does not parse", fix
        ) from None
    for node in tree.walk():
        if not isinstance(node, _ALLOWED):
            raise _error(
                "access_policy_invalid",
                policy,
                f"row filter {text!r} uses {type(node).__name__}, which row filters may not",
                "use comparisons, IN, BETWEEN, IS NULL, LIKE, AND, OR and NOT over fields",
            )
    datasets = {c.table for c in tree.find_all(exp.Column) if c.table != _USER_TABLE}
    if len(datasets) != 1:
        raise _error(
            "access_policy_invalid",
            policy,
            f"row filter {text!r} must name fields of exactly one dataset as `dataset.field`",
            fix,
        )
    dataset = datasets.pop()
    ds = model.datasets.get(dataset)
    if ds is None:
        raise _error(
            "access_policy_invalid",
            policy,
            f"row filter {text!r}: no dataset `{dataset}` in the model",
            fix,
        )
    fields = {}
    for col in tree.find_all(exp.Column):
        if col.table == _USER_TABLE:
            continue
        f = ds.fields.get(col.name)
        if f is None or f.lod is not None:
            raise _error(
                "access_policy_invalid",
                policy,
                f"row filter {text!r}: `{dataset}.{col.name}` is not a plain field of the dataset",
                fix,
            )
        fields[id(col)] = f
    bound = _bind(tree, fields, user, policy, text)
    if target is None or target == dataset:
        return RowFilter(policy, dataset, bound)
    return RowFilter(policy, target, through_path(model, policy, target, dataset, bound))


def _literal(value: object) -> exp.Expression:
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, (int, float)):
        lit = exp.Literal.number(abs(value))
        return exp.Neg(this=lit) if value < 0 else lit
    return exp.Literal.string(str(value))


def _bind(
    tree: exp.Expression,
    fields: dict[int, FieldIr],
    user: UserContext,
    policy: str,
    text: str,
) -> exp.Expression:
    def value_of(col: exp.Column) -> object:
        if col.name not in user.attributes:
            raise _error(
                "access_attribute_missing",
                policy,
                f"user `{user.name}` has no attribute `{col.name}` that row filter {text!r} reads",
                "give the user the attribute in the identities, or the user gets no answer",
            )
        return user.attributes[col.name]

    def is_attr(node: exp.Expression) -> exp.Column | None:
        while isinstance(node, exp.Paren):
            node = node.this
        return node if isinstance(node, exp.Column) and node.table == _USER_TABLE else None

    def check_type(other: exp.Expression, values: tuple[object, ...]) -> None:
        f = fields.get(id(other)) if isinstance(other, exp.Column) else None
        if f is None:
            return
        numeric = f.datatype in _NUMERIC
        if numeric and any(isinstance(v, (str, bool)) for v in values):
            wrong = "text"
        elif f.datatype in _TEXT and any(not isinstance(v, str) for v in values):
            wrong = "non-text"
        else:
            return
        raise _error(
            "access_attribute_type",
            policy,
            f"row filter {text!r} compares the {f.datatype} field `{f.qualified}` with a "
            f"{wrong} attribute of user `{user.name}`",
            "store the attribute with the field's type",
        )

    for node in list(tree.walk()):
        if isinstance(node, exp.In):
            items = node.expressions
            attr = is_attr(items[0]) if len(items) == 1 else None
            if attr is not None:
                v = value_of(attr)
                values = v if isinstance(v, tuple) else (v,)
                check_type(node.this, values)
                if not values:  # IN of nothing: no rows (never `IN ()`)
                    node.replace(exp.false())
                else:
                    node.set("expressions", [_literal(x) for x in values])
        elif isinstance(node, exp.Binary) and not isinstance(node, exp.Connector):
            for side, other in ((node.left, node.right), (node.right, node.left)):
                attr = is_attr(side)
                if attr is not None:
                    v = value_of(attr)
                    if isinstance(v, tuple):
                        raise _error(
                            "access_attribute_type",
                            policy,
                            f"attribute `{attr.name}` of user `{user.name}` is a list; row "
                            f"filter {text!r} compares it as one value",
                            "use `IN {user." + attr.name + "}` for a list attribute",
                        )
                    check_type(other, (v,))
    for col in list(tree.find_all(exp.Column)):
        if col.table == _USER_TABLE:
            v = value_of(col)
            if isinstance(v, tuple):
                raise _error(
                    "access_attribute_type",
                    policy,
                    f"attribute `{col.name}` of "
                    f"user `{user.name}` is a list where one value is needed",
                    "use it with IN",
                )
            col.replace(_literal(v))
    for col in list(tree.find_all(exp.Column)):
        f = fields.get(id(col))
        if f is not None:
            col.replace(f.expr.copy())
    return tree
