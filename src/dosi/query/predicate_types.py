"""Type families for allow-listed predicates, so that a filter that compiles also binds.

DuckDB (and every warehouse) rejects `orders.order_id LIKE 0`, `lower(orders.amount)` or
`orders.order_date > 5` when it binds the query; dosi checks the same at compile time from the
model's field datatypes (Ossie `datatype`) and names the mismatch (`filter_type_mismatch`). The
check is conservative: a mix the engines disagree on (a string column against a number) is
rejected with a hint to CAST; a field without a datatype is `any` and passes. A string literal
coerces to any type in a comparison (its value can still fail at run time, a data error).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from sqlglot import exp

from dosi.errors import QueryError

# families
NUM: Final = "number"
STR: Final = "string"
STRLIT: Final = "string literal"
BOOL: Final = "boolean"
TEMPORAL: Final = "date/timestamp"
TIME: Final = "time"
INTERVAL: Final = "interval"
NULL: Final = "null"
ANY: Final = "any"

#: Ossie field datatypes -> families.
DATATYPE_FAMILY: Final[dict[str, str]] = {
    "String": STR,
    "Integer": NUM,
    "Decimal": NUM,
    "Float": NUM,
    "Boolean": BOOL,
    "Date": TEMPORAL,
    "DateTime": TEMPORAL,
    "DateTimeTz": TEMPORAL,
    "Time": TIME,
}

_T = exp.DataType.Type
_CAST_FAMILY: Final[dict[exp.DataType.Type, str]] = {
    _T.BOOLEAN: BOOL,
    _T.TINYINT: NUM,
    _T.SMALLINT: NUM,
    _T.INT: NUM,
    _T.BIGINT: NUM,
    _T.DECIMAL: NUM,
    _T.FLOAT: NUM,
    _T.DOUBLE: NUM,
    _T.VARCHAR: STR,
    _T.CHAR: STR,
    _T.TEXT: STR,
    _T.DATE: TEMPORAL,
    _T.TIMESTAMP: TEMPORAL,
    _T.DATETIME: TEMPORAL,
    _T.TIME: TIME,
}

_S = frozenset({STR, STRLIT, NULL, ANY})
_N = frozenset({NUM, NULL, ANY})
_D = frozenset({TEMPORAL, NULL, ANY})
_DT = frozenset({TEMPORAL, TIME, NULL, ANY})
_B = frozenset({BOOL, NUM, NULL, ANY})
_UNIT = frozenset({STRLIT, ANY})
_ALL = frozenset({NUM, STR, STRLIT, BOOL, TEMPORAL, TIME, INTERVAL, NULL, ANY})

#: Function -> ({argument key: accepted families}, result family).
_FUNCTIONS: Final[dict[type[exp.Expression], tuple[dict[str, frozenset[str]], str]]] = {
    exp.Lower: ({"this": _S}, STR),
    exp.Upper: ({"this": _S}, STR),
    exp.Length: ({"this": _S}, NUM),
    exp.Trim: ({"this": _S, "expression": _S}, STR),
    exp.Substring: ({"this": _S, "start": _N, "length": _N}, STR),
    exp.Concat: ({"expressions": _ALL}, STR),
    exp.Replace: ({"this": _S, "expression": _S, "replacement": _S}, STR),
    exp.Left: ({"this": _S, "expression": _N}, STR),
    exp.Right: ({"this": _S, "expression": _N}, STR),
    exp.StrPosition: ({"this": _S, "substr": _S}, NUM),
    exp.StartsWith: ({"this": _S, "expression": _S}, BOOL),
    exp.Abs: ({"this": _N}, NUM),
    exp.Ceil: ({"this": _N, "decimals": _N}, NUM),
    exp.Floor: ({"this": _N, "decimals": _N}, NUM),
    exp.Round: ({"this": _N, "decimals": _N}, NUM),
    exp.Sqrt: ({"this": _N}, NUM),
    exp.Ln: ({"this": _N}, NUM),
    exp.Exp: ({"this": _N}, NUM),
    exp.Pow: ({"this": _N, "expression": _N}, NUM),
    exp.Sign: ({"this": _N}, NUM),
    exp.Mod: ({"this": _N, "expression": _N}, NUM),
    exp.Year: ({"this": _D}, NUM),
    exp.Quarter: ({"this": _D}, NUM),
    exp.Month: ({"this": _D}, NUM),
    exp.Week: ({"this": _D}, NUM),
    exp.Day: ({"this": _D}, NUM),
    exp.DayOfWeek: ({"this": _D}, NUM),
    exp.DayOfYear: ({"this": _D}, NUM),
    exp.Hour: ({"this": _DT}, NUM),
    exp.Minute: ({"this": _DT}, NUM),
    exp.Second: ({"this": _DT}, NUM),
    exp.Extract: ({"expression": _DT}, NUM),
    exp.DateTrunc: ({"unit": _UNIT, "this": _D}, TEMPORAL),
}

#: Nodes whose operands must share one family; the result is that family.
_UNIFYING = (exp.Coalesce, exp.Greatest, exp.Least, exp.Nullif)
_COMPARISONS = (
    exp.EQ,
    exp.NEQ,
    exp.GT,
    exp.GTE,
    exp.LT,
    exp.LTE,
    exp.NullSafeEQ,
    exp.NullSafeNEQ,
)

ColumnType = Callable[[exp.Column], str]


def _mismatch(node: exp.Expression, message: str) -> QueryError:
    text = node.sql()
    shown = text if len(text) <= 100 else text[:100] + "..."
    return QueryError(
        "filter_type_mismatch",
        f"`{shown}`: {message}",
        hint="compare like with like; CAST(dataset.field AS <type>) converts explicitly",
    )


def _comparable(a: str, b: str) -> bool:
    if a in (NULL, ANY, STRLIT) or b in (NULL, ANY, STRLIT):
        return True
    return a == b  # no number-boolean mixing: engines disagree (DuckDB's BETWEEN refuses it)


def _unify(node: exp.Expression, families: list[str]) -> str:
    """One family for values that end up in one column (COALESCE, CASE branches, ...)."""
    known = [STR if f == STRLIT else f for f in families if f not in (NULL, ANY)]
    if not known:
        return ANY if ANY in families else NULL
    first = known[0]
    for f in known[1:]:
        if f != first:
            raise _mismatch(node, f"mixes {first} and {f} values")
    return first


def _literal(node: exp.Literal) -> str:
    return STRLIT if node.is_string else NUM


def _arith(node: exp.Expression, a: str, b: str) -> str:
    if a in (NULL, ANY) or b in (NULL, ANY):
        return ANY if TEMPORAL in (a, b) or INTERVAL in (a, b) else (NUM if NUM in (a, b) else ANY)
    if isinstance(node, (exp.Add, exp.Sub)):
        if a == NUM and b == NUM:
            return NUM
        if a == TEMPORAL and b in (NUM, INTERVAL):
            return TEMPORAL
        if isinstance(node, exp.Add) and b == TEMPORAL and a in (NUM, INTERVAL):
            return TEMPORAL
        if isinstance(node, exp.Sub) and a == TEMPORAL and b == TEMPORAL:
            return NUM
        if a == INTERVAL and b == INTERVAL:
            return INTERVAL
    elif a == NUM and b == NUM:
        return NUM
    op = type(node).__name__.lower()
    raise _mismatch(node, f"cannot apply `{op}` to {a} and {b}")


def _post_order(tree: exp.Expression) -> list[exp.Expression]:
    """Nodes children-first, without recursion (AND / OR chains can be thousands long)."""
    out: list[exp.Expression] = []
    stack: list[tuple[exp.Expression, bool]] = [(tree, False)]
    while stack:
        node, done = stack.pop()
        if done or isinstance(node, (exp.Column, exp.Literal, exp.DataType, exp.Var)):
            out.append(node)
            continue
        stack.append((node, True))
        stack.extend((child, False) for child in node.iter_expressions())
    return out


def check_types(tree: exp.Expression, column_type: ColumnType) -> str:
    """The family of an allow-listed predicate (after `check_predicate`, before its columns are
    replaced); raises `filter_type_mismatch` where a database would refuse to bind it."""
    fam: dict[int, str] = {}

    def of(node: exp.Expression | None) -> str:
        return ANY if node is None else fam.get(id(node), ANY)

    for node in _post_order(tree):
        fam[id(node)] = _family(node, of, column_type)
    top = of(tree)
    if top not in (BOOL, NULL, ANY):
        raise _mismatch(tree, f"is a {top} value, not a condition")
    return top


def _family(
    node: exp.Expression, of: Callable[[exp.Expression | None], str], column_type: ColumnType
) -> str:
    if isinstance(node, exp.Column):
        return column_type(node)
    if isinstance(node, exp.Literal):
        return _literal(node)
    if isinstance(node, exp.Null):
        return NULL
    if isinstance(node, exp.Boolean):
        return BOOL
    if isinstance(node, (exp.Var, exp.Identifier, exp.DataType, exp.DataTypeParam)):
        return ANY
    if isinstance(node, exp.Paren):
        return of(node.this)
    if isinstance(node, exp.Interval):
        return INTERVAL
    if isinstance(node, (exp.Cast, exp.TryCast)):
        to = node.args.get("to")
        return _CAST_FAMILY.get(to.this, ANY) if isinstance(to, exp.DataType) else ANY
    if isinstance(node, (exp.And, exp.Or, exp.Not)):
        for child in node.iter_expressions():
            if of(child) not in _B:
                raise _mismatch(node, f"combines a {of(child)} value as a condition")
        return BOOL
    if isinstance(node, exp.Is):
        return BOOL
    if isinstance(node, _COMPARISONS):
        a, b = of(node.this), of(node.expression)
        if not _comparable(a, b):
            raise _mismatch(node, f"compares a {a} with a {b}")
        return BOOL
    if isinstance(node, exp.Between):
        a = of(node.this)
        for bound in (node.args.get("low"), node.args.get("high")):
            if not _comparable(a, of(bound)):
                raise _mismatch(node, f"compares a {a} with a {of(bound)}")
        return BOOL
    if isinstance(node, exp.In):
        a = of(node.this)
        for item in node.expressions:
            if not _comparable(a, of(item)):
                raise _mismatch(node, f"compares a {a} with a {of(item)}")
        return BOOL
    if isinstance(node, (exp.Like, exp.ILike)):
        for child in (node.this, node.expression):
            if of(child) not in _S:
                raise _mismatch(node, f"matches a {of(child)} value with LIKE; LIKE reads strings")
        return BOOL
    if isinstance(node, exp.Escape):
        return of(node.this)
    if isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod)) and not isinstance(
        node, exp.Func
    ):
        return _arith(node, of(node.this), of(node.expression))
    if isinstance(node, exp.DPipe):
        return STR
    if isinstance(node, exp.Neg):
        inner = of(node.this)
        if inner not in (NUM, INTERVAL, NULL, ANY):
            raise _mismatch(node, f"negates a {inner} value")
        return inner
    if isinstance(node, exp.Case):
        for branch in node.args.get("ifs") or []:
            if of(branch.this) not in _B:
                raise _mismatch(node, f"uses a {of(branch.this)} value as a WHEN condition")
        values = [of(b.args.get("true")) for b in node.args.get("ifs") or []]
        if node.args.get("default") is not None:
            values.append(of(node.args["default"]))
        return _unify(node, values)
    if isinstance(node, exp.If):
        if node.parent is not None and isinstance(node.parent, exp.Case):
            return ANY  # a CASE branch: checked by its Case
        if of(node.this) not in _B:
            raise _mismatch(node, f"uses a {of(node.this)} value as a condition")
        return _unify(node, [of(node.args.get("true")), of(node.args.get("false"))])
    if isinstance(node, _UNIFYING):
        return _unify(node, [of(child) for child in node.iter_expressions()])
    rule = _FUNCTIONS.get(type(node))
    if rule is not None:
        accepts, result = rule
        for key, accepted in accepts.items():
            value = node.args.get(key)
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, exp.Expression) and of(child) not in accepted:
                    name = node.sql_name().lower()
                    raise _mismatch(node, f"`{name}` does not take a {of(child)} value")
        return result
    return ANY
