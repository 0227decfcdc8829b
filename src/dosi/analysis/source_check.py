"""The model against the real warehouse (issue 21 item 7; CHECKLIST CORE-MOD-01 says a model
loads, this says its tables are there): every dataset's source exists, and every column a
field, a key or a relationship names exists with a type compatible with the field's declared
`datatype`. Each problem is one issue naming the dataset, the column and the closest real
names. The facade (`Engine.validate_sources`) reads the warehouse and hands the columns in.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from sqlglot import exp

from dosi.errors import closest
from dosi.ir.lod_field import lod_tag
from dosi.ir.model import DatasetIr, FieldIr, ModelIr
from dosi.sql.dialects import get_dialect

#: what the warehouse holds per dataset: (column -> engine type name, or None when the source
#: does not exist; the schema's tables, for candidates)
Found = Mapping[str, tuple[dict[str, str] | None, tuple[str, ...]]]

NUMBER, TEXT, BOOL, TIME = "number", "text", "boolean", "time"
_DECLARED: Final[dict[str, str]] = {
    "Integer": NUMBER,
    "Decimal": NUMBER,
    "Float": NUMBER,
    "String": TEXT,
    "Boolean": BOOL,
    "Date": TIME,
    "DateTime": TIME,
    "DateTimeTz": TIME,
    "Time": TIME,
}
#: engine type names (catalogs and Arrow) -> family, by the first word that matches
_WORDS: Final[tuple[tuple[str, str], ...]] = (
    ("bool", BOOL),
    ("interval", ""),
    ("date", TIME),
    ("time", TIME),
    ("int", NUMBER),
    ("decimal", NUMBER),
    ("numeric", NUMBER),
    ("double", NUMBER),
    ("float", NUMBER),
    ("real", NUMBER),
    ("number", NUMBER),
    ("char", TEXT),
    ("text", TEXT),
    ("string", TEXT),
    ("utf8", TEXT),
    ("clob", TEXT),
)


def type_family(name: str) -> str:
    """The family of an engine's type name; "" when dosi does not know it (never flagged)."""
    low = name.lower()
    for word, family in _WORDS:
        if word in low:
            return family
    return ""


def compatible(declared: str, actual: str, dialect: str) -> bool:
    """Whether a column of engine type `actual` can hold a field declared `declared`."""
    want = _DECLARED.get(declared, "")
    have = type_family(actual)
    if not want or not have or want == have:
        return True
    if want == BOOL and have == NUMBER:  # MySQL's TINYINT(1), SQLite's 0 / 1
        return True
    # SQLite keeps dates and flags in any column type: ISO text reads as either
    return get_dialect(dialect).temporal_as_text and want in (TIME, BOOL) and have == TEXT


def _columns_of(expr: exp.Expression, dataset: str) -> list[str]:
    """The source columns an expression reads (a D-LOD field it reads is no column)."""
    return list(
        dict.fromkeys(
            c.name
            for c in expr.find_all(exp.Column)
            if c.table in ("", dataset) and c.name and lod_tag(c) is None
        )
    )


def _bare_column(f: FieldIr) -> str | None:
    node = f.expr
    while isinstance(node, exp.Paren):
        node = node.this
    return node.name if isinstance(node, exp.Column) else None


def _named(model: ModelIr, ds: DatasetIr) -> Iterator[tuple[str, str, FieldIr | None]]:
    """(column, what names it, the field when it is one) for every column of `ds`."""
    for f in ds.fields.values():
        if f.lod is not None:  # D-LOD fixed field: an aggregate of its dataset, no column
            continue
        for c in _columns_of(f.expr, ds.name):
            yield c, f"field `{f.qualified}`", f
    for key in ds.primary_key:
        f = ds.fields.get(key)
        for c in _columns_of(f.expr, ds.name) if f is not None else [key]:
            yield c, f"primary key `{key}`", None
    for r in model.relationships:
        for side, exprs in ((r.from_dataset, r.from_exprs), (r.to_dataset, r.to_exprs)):
            if side != ds.name:
                continue
            for e in exprs:
                for c in _columns_of(e, ds.name):
                    yield c, f"relationship `{r.name}`", None


def check_sources(model: ModelIr, found: Found, dialect: str) -> list[dict[str, Any]]:
    """One issue per missing source, missing column and incompatible column type."""
    issues: list[dict[str, Any]] = []
    for ds in model.datasets.values():
        if ds.name not in found:
            continue
        columns, tables = found[ds.name]
        source = ds.source.sql(dialect=dialect)
        if columns is None:
            name = ds.source.name if isinstance(ds.source, exp.Table) else source
            issues.append(
                {
                    "code": "source_not_found",
                    "severity": "error",
                    "message": f"dataset `{ds.name}`: its source `{source[:120]}` does not "
                    "exist on the warehouse (or cannot be read)",
                    "dataset": ds.name,
                    "path": f"datasets[{ds.name}].source",
                    "candidates": closest(name, tables),
                    "hint": "fix `source`, or validate against the database that holds it",
                }
            )
            continue
        lower = {c.lower(): c for c in columns}
        seen: set[tuple[str, str]] = set()
        for col, why, f in _named(model, ds):
            real_name = col if col in columns else lower.get(col.lower())
            if real_name is None:
                if (col, why) in seen:
                    continue
                seen.add((col, why))
                issue: dict[str, Any] = {
                    "code": "column_not_found",
                    "severity": "error",
                    "message": f"dataset `{ds.name}`: {why} reads column `{col}`, which "
                    f"`{source[:120]}` does not have",
                    "dataset": ds.name,
                    "column": col,
                    "path": f"datasets[{ds.name}]"
                    + (f".fields[{f.name}]" if f is not None else ""),
                    "candidates": closest(col, columns),
                    "hint": "name a column the table has (candidates), or add it",
                }
                if f is not None:
                    issue["field"] = f.qualified
                issues.append(issue)
                continue
            real = columns[real_name]
            if f is None or f.datatype is None or f.encoded or _bare_column(f) != col:
                continue
            if not compatible(f.datatype, real, dialect):
                issues.append(
                    {
                        "code": "column_type_mismatch",
                        "severity": "error",
                        "message": f"field `{f.qualified}` is declared {f.datatype}, but column "
                        f"`{real_name}` of `{source[:120]}` is {real}",
                        "dataset": ds.name,
                        "column": real_name,
                        "field": f.qualified,
                        "declared": f.datatype,
                        "actual": real,
                        "path": f"datasets[{ds.name}].fields[{f.name}]",
                        "hint": "declare the datatype the column holds, or CAST it in the "
                        "field's expression",
                    }
                )
    return issues
