"""A dataset's source: a table reference or a `SELECT ...` subquery, checked for trust.

Ossie "Datasets": `source` is either; a source that does not parse, or that reads files or
settings without trust_sql, becomes the placeholder table `invalid_source` after its error, so
the remaining checks still run and report everything at once.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from dosi.compiler.context import CompileContext
from dosi.compiler.sqlparse import MODEL_LIMITS, check_text_limits, drop_positions
from dosi.compiler.trusted_sql import untrusted_construct
from dosi.model.schema import DatasetSpec


def compile_source(
    cx: CompileContext, ds: DatasetSpec, dpath: str, dline: int | None
) -> exp.Expression:
    src = ds.source.strip()
    head = src[:6].lower()
    node: exp.Expression
    if head.startswith("select") or head.startswith("with") or src.startswith("("):
        try:
            check_text_limits(src, MODEL_LIMITS, f"source of `{ds.name}`")
            inner = src[1:-1] if src.startswith("(") and src.endswith(")") else src
            q = sqlglot.parse_one(inner)
        except Exception as err:  # parse errors, limits, a RecursionError backstop
            cx.sink.error(
                "invalid_source",
                f"source of `{ds.name}` is not a valid query: {str(err)[:300]}",
                path=dpath,
                line=dline,
            )
            return exp.to_table("invalid_source")
        node = exp.Subquery(this=q)
    else:
        try:
            node = exp.to_table(src)
        except Exception:
            cx.sink.error(
                "invalid_source",
                f"source `{src[:200]}` of `{ds.name}` is not a table reference",
                path=dpath,
                line=dline,
            )
            return exp.to_table("invalid_source")
    if not cx.trust_sql:
        what = untrusted_construct(node)
        if what is not None:
            cx.untrusted(f"source of `{ds.name}`", what, dpath, dline)
            return exp.to_table("invalid_source")
    drop_positions(node)  # cloned by every query that reads it
    return node
