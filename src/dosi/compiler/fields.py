"""Field expressions: parse, inline references to sibling fields, qualify physical columns.

A field expression reads physical columns of its dataset's source and may name other fields of
the same dataset (Ossie "Fields": computed expressions). Inlining happens here, once, so the
planner only ever sees expressions over `<dataset>.<column>`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from sqlglot import exp

from dosi.compiler.sqlparse import (
    MODEL_LIMITS,
    OSI_READERS,
    OSSIE_SQL_READERS,
    TARGET_TO_OSI,
    SqlSnippetError,
    SqlTooComplex,
    check_tree_limits,
    has_window,
    parse_scalar,
)
from dosi.compiler.trees import clone
from dosi.compiler.trusted_sql import untrusted_construct
from dosi.errors import DiagnosticSink
from dosi.ir.lod_field import lod_placeholder
from dosi.model.schema import Expression

PREFERRED_OSI = ("ANSI_SQL",)


def pick_expression(expr: Expression, target: str | None = None) -> tuple[str, str]:
    """The (dialect, text) entry to compile: the entry written for the `target` engine (a dosi
    dialect key such as duckdb: a DUCKDB entry), else ANSI_SQL, else an Ossie SQL dialect
    entry (SNOWFLAKE, DATABRICKS, BIGQUERY, transpiled), else an engine-named entry dosi can
    carry to `target`; else the first entry, which `usable` refuses."""
    entries: dict[str, str] = {}
    for d in expr.dialects:  # a name outside the Ossie list is matched case-insensitively
        name = d.dialect if d.dialect in OSSIE_SQL_READERS else d.dialect.upper()
        entries.setdefault(name, d.expression)
    for name in (*TARGET_TO_OSI.get(target or "", ()), *PREFERRED_OSI):
        if name in entries:
            return name, entries[name]
    for name, text in entries.items():
        if name in OSSIE_SQL_READERS:
            return name, text
    for name, text in entries.items():
        if usable(name, target, text):
            return name, text
    first = expr.dialects[0]
    return first.dialect, first.expression


def usable(dialect: str, target: str | None, text: str) -> bool:
    """An entry dosi runs on `target`: ANSI_SQL or an Ossie SQL dialect anywhere (transpiled,
    as ever); a name outside the Ossie list (DUCKDB, POSTGRESQL, ...) on the engine it names,
    or elsewhere when it calls no function only that engine knows (sqlglot transpiles what it
    models; an unknown function would render SQL the target cannot run). MDX, TABLEAU, MAQL
    and unknown names are not SQL dosi reads."""
    if dialect in OSSIE_SQL_READERS:
        return True
    if dialect not in OSI_READERS:
        return False
    if target is None or dialect in TARGET_TO_OSI.get(target, ()):
        return True
    return _portable(text, OSI_READERS[dialect])


@lru_cache(maxsize=4096)
def _portable(text: str, read: str | None) -> bool:
    try:
        tree = parse_scalar(text, read)
    except SqlSnippetError:
        return True  # the parse error is reported where the expression is compiled
    return tree.find(exp.Anonymous) is None


def unusable_message(what: str, expr: Expression, target: str | None) -> str:
    names = ", ".join(dict.fromkeys(d.dialect for d in expr.dialects))
    on = f" on {target}" if target else ""
    return (
        f"{what} has no expression dosi can run{on}: its entries ({names}) are neither "
        "ANSI_SQL, an Ossie SQL dialect (SNOWFLAKE, DATABRICKS, BIGQUERY), written for the "
        "engine the model runs on, nor free of functions only their own engine knows"
    )


@dataclass
class RawField:
    name: str
    text: str
    read: str | None
    path: str
    tree: exp.Expression | None = None


def qualify_dataset_fields(
    dataset: str,
    raw: dict[str, RawField],
    sink: DiagnosticSink,
    lines: dict[str, int | None],
    trust_sql: bool = False,
    lod_fields: frozenset[str] = frozenset(),
    basic_dropped: frozenset[str] = frozenset(),
) -> dict[str, exp.Expression]:
    """Resolve every field of one dataset to an expression over qualified physical columns.

    Inlining is bounded: a chain of field references deeper than MODEL_LIMITS.max_depth, or an
    inlined expression over MODEL_LIMITS.max_nodes (fields that double each other), is
    `expression_too_complex`. A D-LOD fixed field (`lod_fields`) keeps its aggregate in
    `raw[name].tree` and resolves to its placeholder column (dosi.ir.lod_field)."""
    resolved: dict[str, exp.Expression] = {}
    for f in raw.values():
        try:
            f.tree = parse_scalar(f.text, f.read)
        except SqlTooComplex as err:
            sink.error("expression_too_complex", str(err), path=f.path, line=lines.get(f.path))
            continue
        except SqlSnippetError as err:
            sink.error("unparseable_expression", str(err), path=f.path, line=lines.get(f.path))
            continue
        what = None if trust_sql else untrusted_construct(f.tree)
        if what is not None:
            sink.error(
                "untrusted_sql",
                f"field `{dataset}.{f.name}` uses {what}; model SQL may not write, run statements "
                "or read files or settings",
                path=f.path,
                line=lines.get(f.path),
                hint="remove it, or load the model with trust_sql=True (CLI --trust-sql) if you "
                "trust its author",
            )
            f.tree = None
        elif f.name in lod_fields:
            resolved[f.name] = lod_placeholder(dataset, f.name, ident(f.name))
        elif f.name in basic_dropped and f.tree.find(exp.AggFunc) is not None:
            sink.warn(
                "aggregate_field_dropped",
                f"field `{dataset}.{f.name}` aggregates (`{f.text}`) and its D-LOD declaration "
                "is not read in basic mode, so the field is dropped",
                path=f.path,
                line=lines.get(f.path),
                hint="load the model in datus mode to compute it as a fixed level of detail",
            )
            f.tree = None
        elif f.tree.find(exp.AggFunc) is not None:
            sink.error(
                "aggregate_in_field",
                f"field `{dataset}.{f.name}` aggregates (`{f.text}`); field expressions are "
                "row-level",
                path=f.path,
                line=lines.get(f.path),
                hint="move the aggregate into a metric expression",
            )
            f.tree = None
        elif has_window(f.tree):
            sink.error(
                "window_in_field",
                f"field `{dataset}.{f.name}` uses a window function; fields are row-level",
                path=f.path,
                line=lines.get(f.path),
                hint="declare a window metric with the DATUS `window` extension instead",
            )
            f.tree = None

    def resolve(name: str, stack: tuple[str, ...]) -> exp.Expression | None:
        if name in resolved:
            return resolved[name]
        f = raw[name]
        if f.tree is None:
            return None
        out = f.tree.copy()
        for col in list(out.find_all(exp.Column)):
            ref = col.name
            qualifier = col.table
            if qualifier and qualifier != dataset:
                sink.error(
                    "invalid_expression",
                    f"field `{dataset}.{name}` reads `{col.sql()}` from another dataset; field "
                    "expressions read their own dataset only",
                    path=f.path,
                    line=lines.get(f.path),
                )
                return None
            if ref in raw and ref != name:
                if len(stack) >= MODEL_LIMITS.max_depth:
                    sink.error(
                        "expression_too_complex",
                        f"field `{dataset}.{name}` reaches through more than "
                        f"{MODEL_LIMITS.max_depth} field references",
                        path=f.path,
                        line=lines.get(f.path),
                    )
                    return None
                if ref in stack:
                    cycle = " -> ".join((*stack, ref))
                    sink.error(
                        "field_reference_cycle",
                        f"fields reference each other in a cycle: {cycle}",
                        path=f.path,
                        line=lines.get(f.path),
                    )
                    return None
                inner = resolve(ref, (*stack, ref))
                if inner is None:
                    return None
                new: exp.Expression = _paren(inner.copy())
            else:
                new = exp.Column(this=col.this.copy(), table=ident(dataset))
            if col is out:
                out = new
            else:
                col.replace(new)
        try:
            check_tree_limits(out, MODEL_LIMITS, f"field `{dataset}.{name}` (fields inlined)")
        except SqlTooComplex as err:
            sink.error("expression_too_complex", str(err), path=f.path, line=lines.get(f.path))
            return None
        resolved[name] = out
        return out

    for name in raw:
        resolve(name, (name,))
    return resolved


def _paren(node: exp.Expression) -> exp.Expression:
    if isinstance(node, (exp.Column, exp.Literal, exp.Anonymous, exp.Func, exp.Paren)):
        return node
    return exp.Paren(this=node)


def field_reference(qualified: str, expr: exp.Expression) -> exp.Expression:
    """A copy of a field's expression to put where a metric or filter names the field,
    parenthesised when needed and tagged with the field it came from."""
    out = _paren(clone(expr))
    out.meta["dosi_field"] = qualified
    return out


def physical_column(dataset: str, column: str) -> exp.Column:
    """A source column by its name in the model (a key or relationship column that is not a
    declared field), qualified by the dataset alias and quoted only when it must be, as a
    field expression naming it would be."""
    return exp.Column(this=exp.to_identifier(column), table=ident(dataset))


def ident(name: str) -> exp.Identifier:
    """An identifier for a model name, quoted only when it must be."""
    return exp.Identifier(this=name, quoted=_must_quote(name))


@lru_cache(maxsize=4096)
def _must_quote(name: str) -> bool:
    """Names repeat in every query's SQL: the answer is kept (compile time: docs/performance.md)."""
    return not name.isidentifier() or name.lower() != name
