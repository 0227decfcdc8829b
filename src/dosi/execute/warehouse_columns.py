"""The columns a warehouse table really has, read through an open runner (issue 21 item 7:
`dosi validate --db / --connections`, `Engine.validate_sources`).

Each engine's catalog is asked where dosi knows it (DuckDB and PostgreSQL
`information_schema.columns` in the current schema, MySQL / MariaDB in the current database,
SQLite `pragma_table_info`), so the declared column types come back; any other engine (chDB,
DataFusion, Spark, a `SELECT ...` source) is probed with `SELECT * FROM source LIMIT 0`, whose
Arrow schema names the columns (and their types where the engine reports them for no rows).
Every statement is a sqlglot tree rendered in the runner's dialect; a table name enters it
only as a string literal or a parsed table reference.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import pyarrow as pa
import sqlglot
from sqlglot import exp

from dosi.errors import OsiError

Run = Callable[[str], pa.Table]

#: dialect -> (columns of one table, the tables of the schema): the catalog statements,
#: completed with the table name by `_where_table`
_CATALOGS: Final[dict[str, tuple[str, str]]] = {
    "current_schema": (
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = "
        "current_schema() ORDER BY ordinal_position",
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()",
    ),
    "database": (
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = "
        "DATABASE() ORDER BY ordinal_position",
        "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()",
    ),
}
_SQLITE_TABLES: Final = "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"


@dataclass(frozen=True)
class TableColumns:
    """A source's columns (name -> the engine's type name, "" when unknown), or None when the
    table does not exist; `tables`: the tables of its schema (close candidates)."""

    columns: dict[str, str] | None
    tables: tuple[str, ...] = ()
    how: str = "catalog"  # or "probe"


def _schema_filter(source: exp.Table, dialect: str) -> exp.Expression | None:
    """`table_schema = '<db>'` for a schema-qualified source (else the current schema)."""
    if not source.db:
        return None
    return exp.column("table_schema").eq(exp.Literal.string(source.db))


def _catalog_sql(template: str, dialect: str, source: exp.Table, with_name: bool) -> str:
    tree = sqlglot.parse_one(template, read=dialect)
    assert isinstance(tree, exp.Select)
    schema = _schema_filter(source, dialect)
    if schema is not None:  # replace the current-schema condition by the named one
        where = tree.args["where"]
        where.set("this", schema)
    if with_name:
        tree = tree.where(exp.column("table_name").eq(exp.Literal.string(source.name)))
    return tree.sql(dialect=dialect)


def _sqlite_columns(source: exp.Table) -> str:
    info = exp.Table(
        this=exp.Anonymous(this="pragma_table_info", expressions=[exp.Literal.string(source.name)])
    )
    return exp.select("name", "type").from_(info).sql(dialect="sqlite")


def _strings(table: pa.Table, i: int) -> list[str]:
    return ["" if v is None else str(v) for v in table.column(i).to_pylist()]


def _probe(run: Run, source: exp.Expression, dialect: str) -> TableColumns:
    """`SELECT * FROM source LIMIT 0`: the names (and Arrow types) the engine returns."""
    body = source.copy()
    if isinstance(body, exp.Subquery):
        body = body.as_("s")
    sql = exp.select(exp.Star()).from_(body).limit(0).sql(dialect=dialect)
    try:
        table = run(sql)
    except OsiError as err:
        if err.code in ("missing_driver", "connection_failed", "timeout", "cancelled"):
            raise
        return TableColumns(None, how="probe")
    return TableColumns(
        {f.name: "" if pa.types.is_null(f.type) else str(f.type) for f in table.schema},
        how="probe",
    )


def table_columns(
    run: Run,
    source: exp.Expression,
    dialect: str,
    render: str | None = None,
    catalog: str | None = None,
) -> TableColumns:
    """What `source` (a dataset's Table or Subquery) holds on the warehouse `run` reads;
    `dialect`: the dosi dialect key, `render`: the sqlglot dialect, `catalog`: the dialect's
    column_catalog fact (where the columns are listed; None: a probe)."""
    if not isinstance(source, exp.Table) or source.catalog or not source.name:
        return _probe(run, source, render or dialect)
    if catalog == "pragma" and not source.db:
        found = run(_sqlite_columns(source))
        if found.num_rows:
            return TableColumns(dict(zip(_strings(found, 0), _strings(found, 1), strict=True)))
        return TableColumns(None, tuple(_strings(run(_SQLITE_TABLES), 0)))
    if catalog not in _CATALOGS:
        return _probe(run, source, render or dialect)
    cols_sql, tables_sql = _CATALOGS[catalog]
    found = run(_catalog_sql(cols_sql, render or dialect, source, True))
    if found.num_rows:
        return TableColumns(dict(zip(_strings(found, 0), _strings(found, 1), strict=True)))
    probed = _probe(run, source, render or dialect)  # a view or temporary table the catalog hides
    if probed.columns is not None:
        return probed
    tables = run(_catalog_sql(tables_sql, render or dialect, source, False))
    return TableColumns(None, tuple(_strings(tables, 0)))
