"""The allow-list for query-time predicates (where_sql today; D-DERIVE filters, context filters
and params reuse it): a predicate may hold only what is listed here.

A predicate is caller input, so it is checked against an allow-list, never a block-list: column
references (resolved against the model by a callback), literals, comparison / boolean /
arithmetic operators, IN (a value list), BETWEEN, LIKE / ILIKE, IS [NOT] NULL, CASE / IF, CAST
to a plain type, INTERVAL literals and the pure scalar functions in `ALLOWED_FUNCTIONS` (also
listed in docs/filters.md). Anything else is `unsupported_filter` naming the construct, so
a filter can only filter rows: it cannot read settings, files or variables, sleep, write, load
an extension, or allocate without bound. Size and nesting limits are checked before parsing
(`dosi.compiler.sqlparse.PREDICATE_LIMITS`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from sqlglot import exp

from dosi.errors import QueryError
from dosi.query.predicate_types import ColumnType, check_types

#: The pure scalar functions a predicate may call, by the name callers write (aliases that
#: sqlglot reads as the same function, such as `substr` or `ifnull`, are accepted too).
ALLOWED_FUNCTIONS: Final[dict[str, type[exp.Func]]] = {
    # strings
    "lower": exp.Lower,
    "upper": exp.Upper,
    "length": exp.Length,
    "trim": exp.Trim,
    "substring": exp.Substring,
    "concat": exp.Concat,
    "replace": exp.Replace,
    "left": exp.Left,
    "right": exp.Right,
    "strpos": exp.StrPosition,
    "starts_with": exp.StartsWith,
    # math
    "abs": exp.Abs,
    "ceil": exp.Ceil,
    "floor": exp.Floor,
    "round": exp.Round,
    "sqrt": exp.Sqrt,
    "ln": exp.Ln,
    "exp": exp.Exp,
    "power": exp.Pow,
    "sign": exp.Sign,
    "mod": exp.Mod,
    "greatest": exp.Greatest,
    "least": exp.Least,
    # NULL handling and conditionals
    "coalesce": exp.Coalesce,
    "nullif": exp.Nullif,
    "if": exp.If,
    # date parts
    "year": exp.Year,
    "quarter": exp.Quarter,
    "month": exp.Month,
    "week": exp.Week,
    "day": exp.Day,
    "dayofweek": exp.DayOfWeek,
    "dayofyear": exp.DayOfYear,
    "hour": exp.Hour,
    "minute": exp.Minute,
    "second": exp.Second,
    "extract": exp.Extract,
    "date_trunc": exp.DateTrunc,
}

#: Operators and the other node kinds a predicate may contain.
_OPERATORS: Final[tuple[type[exp.Expression], ...]] = (
    exp.Column,
    exp.Literal,
    exp.Boolean,
    exp.Null,
    exp.Paren,
    exp.Neg,
    exp.Not,
    exp.And,
    exp.Or,
    exp.EQ,
    exp.NEQ,
    exp.GT,
    exp.GTE,
    exp.LT,
    exp.LTE,
    exp.NullSafeEQ,
    exp.NullSafeNEQ,
    exp.Is,
    exp.Add,
    exp.Sub,
    exp.Mul,
    exp.Div,
    exp.Mod,
    exp.DPipe,
    exp.In,
    exp.Between,
    exp.Like,
    exp.ILike,
    exp.Escape,
    exp.Case,
    exp.If,
    exp.Cast,
    exp.TryCast,
    exp.Interval,
)

#: CAST targets: scalar types only (no STRUCT, LIST, MAP, JSON, ...).
PLAIN_TYPES: Final[frozenset[exp.DataType.Type]] = frozenset(
    {
        exp.DataType.Type.BOOLEAN,
        exp.DataType.Type.TINYINT,
        exp.DataType.Type.SMALLINT,
        exp.DataType.Type.INT,
        exp.DataType.Type.BIGINT,
        exp.DataType.Type.DECIMAL,
        exp.DataType.Type.FLOAT,
        exp.DataType.Type.DOUBLE,
        exp.DataType.Type.VARCHAR,
        exp.DataType.Type.CHAR,
        exp.DataType.Type.TEXT,
        exp.DataType.Type.DATE,
        exp.DataType.Type.TIMESTAMP,
        exp.DataType.Type.DATETIME,
        exp.DataType.Type.TIME,
    }
)

_FUNCTION_TYPES: Final[frozenset[type[exp.Expression]]] = frozenset(ALLOWED_FUNCTIONS.values())
_NODE_TYPES: Final[frozenset[type[exp.Expression]]] = frozenset(_OPERATORS) | _FUNCTION_TYPES

#: Numeric literals: the digits a 128-bit integer or DECIMAL(38) holds on every engine.
MAX_NUMBER_DIGITS: Final = 38

#: Resolves one column reference: returns the expression to put in its place (or None to keep
#: it), or raises the caller's QueryError (unknown_field, a metric in a row filter, ...).
ColumnResolver = Callable[[exp.Column], exp.Expression | None]


def construct_name(node: exp.Expression) -> str:
    """How an error names a construct: the function as written, else the SQL kind."""
    if isinstance(node, exp.Anonymous):
        return f"function `{str(node.name)[:64]}`"
    if isinstance(node, exp.Func):
        return f"function `{node.sql_name().lower()}`"
    if isinstance(node, (exp.Query, exp.Subquery)):
        return "subquery"
    if isinstance(node, (exp.DML, exp.DDL, exp.Command)) or type(node).__module__.endswith("ddl"):
        return f"{type(node).__name__.upper()} statement"
    if isinstance(node, (exp.Placeholder, exp.Parameter, exp.SessionParameter)):
        return "parameter placeholder"
    if isinstance(node, exp.DataType):
        return f"CAST to `{node.sql()[:64]}` (only plain scalar types)"
    return f"`{type(node).__name__}` expression"


def _unsupported(node: exp.Expression, label: str) -> QueryError:
    return QueryError(
        "unsupported_filter",
        f"{label} uses {construct_name(node)}, which a filter may not contain",
        hint="filters hold dataset.field references, literals, comparison / boolean / arithmetic "
        "operators, IN, BETWEEN, LIKE / ILIKE, IS [NOT] NULL, CASE, CAST to a plain type and "
        "these functions: " + ", ".join(ALLOWED_FUNCTIONS),
        detail={"allowed_functions": list(ALLOWED_FUNCTIONS)},
    )


def _child_allowed(parent: exp.Expression, key: str, node: exp.Expression) -> bool:
    """Node kinds that are legal only in one place (a type under CAST, a unit under INTERVAL)."""
    if isinstance(node, exp.Identifier):
        return isinstance(parent, exp.Column)
    if isinstance(node, exp.DataType):
        return isinstance(parent, (exp.Cast, exp.TryCast)) and node.this in PLAIN_TYPES
    if isinstance(node, exp.DataTypeParam):
        return isinstance(parent, exp.DataType) and isinstance(node.this, exp.Literal)
    if isinstance(node, exp.Var):  # EXTRACT(YEAR FROM ..), INTERVAL 1 DAY, DATE_TRUNC(month, ..)
        return isinstance(parent, (exp.Extract, exp.Interval, exp.DateTrunc)) and key in (
            "this",
            "unit",
        )
    return False


def check_predicate(
    tree: exp.Expression,
    resolve_column: ColumnResolver,
    *,
    label: str = "where_sql",
    column_type: ColumnType | None = None,
) -> exp.Expression:
    """Check one parsed predicate (or conjunct) against the allow-list and resolve its columns.

    Works for row-level and metric-level conjuncts alike: what a column names is the resolver's
    business. With `column_type` (a column -> type family, after it was resolved) the operand
    types are checked too (`dosi.query.predicate_types`). Returns the tree with every column
    replaced by what the resolver returned.
    """
    replacements: list[tuple[exp.Column, exp.Expression]] = []
    stack: list[tuple[exp.Expression, exp.Expression | None, str]] = [(tree, None, "")]
    while stack:
        node, parent, key = stack.pop()
        if type(node) not in _NODE_TYPES and not (
            parent is not None and _child_allowed(parent, key, node)
        ):
            raise _unsupported(node, label)
        if isinstance(node, exp.In) and any(
            node.args.get(k) is not None for k in ("query", "unnest", "field")
        ):
            raise _unsupported(node.args.get("query") or node.args.get("unnest") or node, label)
        if isinstance(node, exp.Literal) and not node.is_string:
            digits = sum(ch.isdigit() for ch in str(node.this))
            if digits > MAX_NUMBER_DIGITS:
                raise QueryError(
                    "unsupported_filter",
                    f"{label} holds a number with {digits} digits; numbers have at most "
                    f"{MAX_NUMBER_DIGITS} (a 128-bit integer or a DECIMAL(38))",
                    hint="write the number in exponent form, e.g. 1e40",
                )
        if isinstance(node, exp.Column):
            if node.args.get("db") or node.args.get("catalog"):
                raise QueryError(
                    "unknown_field", f"{label} reads `{node.sql()[:80]}`; write dataset.field"
                )
            if not isinstance(node.this, exp.Identifier):
                raise _unsupported(node.this, label)
            new = resolve_column(node)
            if new is not None:
                replacements.append((node, new))
            continue  # the identifiers below are names, already resolved
        found: list[tuple[exp.Expression, exp.Expression | None, str]] = []
        for child_key, value in node.args.items():
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, exp.Expression):
                    found.append((child, node, child_key))
        stack.extend(reversed(found))  # left to right, as written
    if column_type is not None:
        check_types(tree, column_type)
    out = tree
    for col, new in replacements:
        if col is out:
            out = new
        else:
            col.replace(new)
    return out
