"""One SQL statement over a virtual table -> one dosi query and the projection of its result.

The statement is parsed with sqlglot (PostgreSQL syntax) and mapped clause by clause: select
items are dimensions (GROUP BY) and metrics, WHERE / HAVING are `time_range` and `where_sql`,
ORDER BY / LIMIT map to `order_by` / `limit` (OFFSET drops leading rows of the dosi answer).
Whatever has no dosi meaning is refused by name; nothing is ever computed another way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from dosi.errors import QueryError
from dosi.ir.model import ModelIr
from dosi.query.semantic_sql import filters as flt
from dosi.query.semantic_sql.errors import (
    DIMENSION_ONLY,
    GROUPING,
    SYNTAX,
    UNKNOWN_TABLE,
    UNSUPPORTED,
    refuse,
    snippet,
    unsupported,
)
from dosi.query.semantic_sql.items import DimRef, Scope, dimension, metric, output_name
from dosi.query.semantic_sql.params import bind_parameters
from dosi.query.semantic_sql.shape import SCHEMA, VirtualColumn, VirtualTable

MAX_SQL_CHARS = 1_000_000
_ALLOWED_ARGS = {
    "expressions",
    "from",
    "from_",
    "where",
    "group",
    "having",
    "order",
    "limit",
    "offset",
    "distinct",
    "kind",
    "locks",
}


@dataclass(frozen=True)
class Output:
    """One result column: its name, where it comes from in dosi's answer, and a cast."""

    name: str
    index: int
    column: VirtualColumn
    cast: str | None = None


@dataclass(frozen=True)
class SqlPlan:
    """The dosi query (None: the answer is empty without one, e.g. `SELECT * ... LIMIT 0`)
    and how its result becomes the SQL answer."""

    query: dict[str, Any] | None
    outputs: tuple[Output, ...]
    offset: int = 0


def parse(text: str) -> exp.Expression:
    """One statement (PostgreSQL syntax)."""
    if not isinstance(text, str):
        raise refuse(SYNTAX, f"SQL must be text, got {type(text).__name__}")
    if len(text) > MAX_SQL_CHARS:
        raise refuse(SYNTAX, f"the statement is longer than {MAX_SQL_CHARS} characters")
    try:
        stmts = [s for s in sqlglot.parse(text, read="postgres") if s is not None]
    except (ParseError, TokenError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise refuse(SYNTAX, f"cannot parse the statement: {first}") from None
    except RecursionError:
        raise refuse(SYNTAX, "the statement nests too deeply") from None
    if len(stmts) != 1:
        raise refuse(
            SYNTAX, f"expected one statement, got {len(stmts)}", hint="send one SELECT per query"
        )
    stmts[0].meta["sql_text"] = text  # ORDER BY ... NULLS FIRST is read from the text
    return stmts[0]


def translate(
    model: ModelIr,
    table: VirtualTable,
    text: str | exp.Expression,
    params: list[Any] | None = None,
) -> SqlPlan:
    stmt = parse(text) if isinstance(text, str) else text
    if params:
        stmt = bind_parameters(stmt.copy(), params)
    elif any(True for _ in stmt.find_all(exp.Parameter, exp.Placeholder)):
        raise refuse(SYNTAX, "the statement has parameters ($1, ...) but none were bound")
    if not isinstance(stmt, exp.Select):
        raise unsupported(
            stmt,
            f"a {type(stmt).__name__.upper()} statement",
            hint="only SELECT reads a semantic table",
        )
    scope = _scope(model, table, stmt)
    return _Translation(scope, stmt).plan()


def _scope(model: ModelIr, table: VirtualTable, stmt: exp.Select) -> Scope:
    for key, value in stmt.args.items():
        if key not in _ALLOWED_ARGS and value:
            raise unsupported(stmt, f"the {key.upper()} clause")
    if stmt.args.get("joins"):
        raise unsupported(stmt, "a JOIN", hint="a semantic table joins its datasets itself")
    src = stmt.args.get("from") or stmt.args.get("from_")
    if src is None:
        raise unsupported(stmt, "a SELECT without FROM")
    t = src.this
    if not isinstance(t, exp.Table):
        raise unsupported(
            t,
            "a FROM that is not a table",
            hint=(f"read the semantic table directly: FROM {table.name}"),
        )
    if t.name != table.name and t.name.lower() != table.name.lower():
        raise refuse(
            UNKNOWN_TABLE,
            f"relation {t.name!r} does not exist",
            candidates=[table.name],
            hint=f"the semantic table is {table.name!r}",
        )
    if t.db and t.db.lower() not in (SCHEMA, table.name.lower()):
        raise refuse(
            UNKNOWN_TABLE,
            f"schema {t.db!r} does not exist",
            candidates=[SCHEMA],
            hint=f"write {SCHEMA}.{table.name} or {table.name}",
        )
    for bad in stmt.find_all(exp.Subquery, exp.Window, exp.Union, exp.With):
        raise unsupported(bad, "a subquery, window function or set operation")
    names = {t.name.lower()}
    if t.alias:
        names = {t.alias.lower(), t.alias}
    return Scope(model, table, frozenset(names | {t.name}))


@dataclass
class _Item:
    name: str
    dim: DimRef | None = None
    metric: str | None = None


class _Translation:
    def __init__(self, scope: Scope, stmt: exp.Select) -> None:
        self.scope = scope
        self.stmt = stmt
        self.dims: list[DimRef] = []
        self.metrics: list[str] = []

    def _add_dim(self, d: DimRef) -> None:
        if all(x.spelling != d.spelling for x in self.dims):
            self.dims.append(d)

    def _add_metric(self, m: str) -> None:
        if m not in self.metrics:
            self.metrics.append(m)

    def _item(self, node: exp.Expression) -> _Item:
        name = output_name(node)
        inner = node.this if isinstance(node, exp.Alias) else node
        d = dimension(self.scope, inner)
        if d is not None:
            return _Item(name, dim=d)
        m = metric(self.scope, inner)
        if m is not None:
            return _Item(name, metric=m)
        raise unsupported(
            inner,
            "this select item",
            hint=(
                "select dimension columns, DATE_TRUNC of a time column, and metrics as "
                "MEASURE(m) or their own aggregate"
            ),
        )

    def plan(self) -> SqlPlan:
        stmt = self.stmt
        limit, offset = _count(stmt.args.get("limit")), _count(stmt.args.get("offset")) or 0
        if any(isinstance(e, exp.Star) for e in stmt.expressions) or any(
            isinstance(e, exp.Column) and isinstance(e.this, exp.Star) for e in stmt.expressions
        ):
            return self._star(limit)
        items = [self._item(e) for e in stmt.expressions]
        for it in items:
            if it.dim is not None:
                self._add_dim(it.dim)
            else:
                assert it.metric is not None
                self._add_metric(it.metric)
        self._group_by(items)
        order = self._order_by(items)
        filters = flt.collect(self.scope, stmt.args.get("where"), stmt.args.get("having"))
        if not self.metrics:
            raise refuse(
                DIMENSION_ONLY,
                "a query of dimensions only (SELECT DISTINCT dims, or GROUP BY without a "
                "metric) is not implemented yet: dosi answers metric queries",
                hint="add a metric, e.g. MEASURE("
                + (self.scope.table.metric_names() or ["m"])[0]
                + ")",
            )
        query: dict[str, Any] = {"metrics": list(self.metrics)}
        if self.dims:
            query["group_by"] = [d.spelling for d in self.dims]
        time_range, extra = filters.time_range()
        where = [*filters.parts, *extra]
        if where:
            query["where_sql"] = " AND ".join(f"({w})" for w in where)
        if time_range is not None and not filters.empty:
            query["time_range"] = time_range
        if order:
            query["order_by"] = order
        if filters.empty or limit == 0:
            query["limit"] = 0
        elif limit is not None:
            query["limit"] = limit + offset
        outputs = []
        for it in items:
            if it.dim is not None:
                index = next(i for i, d in enumerate(self.dims) if d.spelling == it.dim.spelling)
                outputs.append(Output(it.name, index, it.dim.column, it.dim.cast))
            else:
                index = len(self.dims) + self.metrics.index(it.metric or "")
                col = self.scope.table.metric(it.metric or "")
                assert col is not None
                outputs.append(Output(it.name, index, col))
        if stmt.args.get("distinct") is not None and len(self.dims) > sum(
            1 for it in items if it.dim is not None
        ):
            raise refuse(
                GROUPING,
                "SELECT DISTINCT with a GROUP BY column that is not selected would merge groups",
                hint="select every GROUP BY column",
            )
        return SqlPlan(query, tuple(outputs), offset)

    def _star(self, limit: int | None) -> SqlPlan:
        if limit != 0:
            raise refuse(
                UNSUPPORTED,
                "SELECT * would compute every metric at the grain of every dimension",
                hint="select the dimensions and metrics you need (SELECT * is answered only "
                "with LIMIT 0, for its columns)",
            )
        cols = self.scope.table.columns
        return SqlPlan(None, tuple(Output(c.name, i, c) for i, c in enumerate(cols)))

    def _group_by(self, items: list[_Item]) -> None:
        group = self.stmt.args.get("group")
        if group is None:
            return
        grouped: list[str] = []
        for g in group.expressions:
            d = self._group_item(g, items)
            self._add_dim(d)
            grouped.append(d.spelling)
        for it in items:
            if it.dim is not None and it.dim.spelling not in grouped:
                raise refuse(
                    GROUPING,
                    f"column {it.name!r} must appear in the GROUP BY clause or be used in an "
                    "aggregate function",
                    hint=f"add {it.dim.column.name} to GROUP BY",
                )

    def _group_item(self, g: exp.Expression, items: list[_Item]) -> DimRef:
        picked = _positional(g, items) or _aliased(g, items, self.scope)
        if picked is not None:
            if picked.dim is None:
                raise refuse(
                    GROUPING,
                    f"GROUP BY {snippet(g)} names a metric",
                    hint="group by dimensions only; metrics are computed per group",
                )
            return picked.dim
        d = dimension(self.scope, g)
        if d is None:
            raise refuse(
                GROUPING,
                f"GROUP BY {snippet(g)} is not a dimension",
                hint="group by dimension columns (or DATE_TRUNC of a time column)",
            )
        return d

    def _order_by(self, items: list[_Item]) -> list[dict[str, Any]]:
        order = self.stmt.args.get("order")
        if order is None:
            return []
        explicit = _explicit_nulls(self.stmt)
        out = []
        for i, o in enumerate(order.expressions):
            # ORDER BY reads output names before input columns (PostgreSQL's rule)
            picked = _positional(o.this, items) or _aliased(o.this, items, self.scope, True)
            if picked is not None:
                key = picked.dim.spelling if picked.dim is not None else picked.metric
            else:
                d = dimension(self.scope, o.this)
                if d is not None:
                    if all(x.spelling != d.spelling for x in self.dims):
                        raise refuse(
                            GROUPING,
                            f"ORDER BY {snippet(o.this)} is not grouped",
                            hint="order by a selected or grouped dimension",
                        )
                    key = d.spelling
                else:
                    m = metric(self.scope, o.this)
                    if m is None:
                        raise unsupported(o.this, "this ORDER BY item")
                    self._add_metric(m)
                    key = m
            entry: dict[str, Any] = {"key": key, "desc": bool(o.args.get("desc"))}
            if explicit[i] is not None:
                entry["nulls"] = "first" if explicit[i] else "last"
            out.append(entry)
        return out


def _explicit_nulls(stmt: exp.Select) -> list[bool | None]:
    """Per ORDER BY item: True for NULLS FIRST, None for dosi's rule (NULLs last). PostgreSQL
    sorts NULLs first under DESC unless told otherwise; dosi sorts them last on every
    dialect, so NULLS FIRST is honoured only when the statement spells it."""
    order = stmt.args["order"].expressions
    text = stmt.meta.get("sql_text") or stmt.sql(dialect="postgres")
    spelled = "NULLS FIRST" in re.sub(r"\s+", " ", text.upper())
    return [True if spelled and o.args.get("nulls_first") else None for o in order]


def _positional(node: exp.Expression, items: list[_Item]) -> _Item | None:
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            pos = int(node.this)
        except ValueError:
            pos = 0
        if not 1 <= pos <= len(items):
            raise refuse(
                GROUPING,
                f"position {node.this} is not in the select list",
                hint=f"positions run from 1 to {len(items)}",
            )
        return items[pos - 1]
    return None


def _aliased(
    node: exp.Expression, items: list[_Item], scope: Scope, outputs_first: bool = False
) -> _Item | None:
    """A select item named by its output name (GROUP BY: only when no virtual column has
    that name; ORDER BY: first)."""
    if not isinstance(node, exp.Column) or node.table:
        return None
    name = node.name if node.this.quoted else node.name.lower()
    hits = [it for it in items if it.name == name]
    if not hits:
        return None
    if outputs_first:
        return hits[0]
    if scope.table.column(name) is not None and hits[0].name == name:
        own = dimension(scope, node) if not scope.table.column(name).is_metric else None
        if own is not None or scope.table.column(name).is_metric:
            return None  # the column itself
    return hits[0]


def _count(node: exp.Expression | None) -> int | None:
    if node is None:
        return None
    value = node.args.get("expression") or node.this
    if isinstance(value, exp.Null) or value is None:
        return None
    if isinstance(value, exp.Literal) and not value.is_string:
        try:
            n = int(value.this)
        except ValueError:
            n = -1
        if n >= 0:
            return n
    if isinstance(value, exp.Var) and value.name.upper() == "ALL":
        return None
    raise refuse(
        UNSUPPORTED, f"LIMIT / OFFSET must be a non-negative integer, got `{snippet(value)}`"
    )


__all__ = ["Output", "QueryError", "SqlPlan", "parse", "translate"]
