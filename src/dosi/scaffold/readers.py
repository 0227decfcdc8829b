"""Catalog readers, one per engine: tables, columns and declared keys of one schema.

Each reader runs fixed catalog queries through the engine's `Runner` (no user text is ever
put into SQL: the schema and table filters are applied here, in Python, to what the catalog
lists; the one exception, Spark's `DESCRIBE`, takes a name rendered by sqlglot). Keys come
from where each engine declares them: `duckdb_constraints()`, `pg_constraint`,
`information_schema.key_column_usage` (MySQL/MariaDB), SQLite's `pragma_*` functions.
ClickHouse and Spark declare no enforced keys, so their tables get none (`dosi init
--match-ids` can infer them).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from sqlglot import exp

from dosi.errors import ArgumentError, ExecuteError
from dosi.execute.runner import Runner
from dosi.scaffold.catalog import SYSTEM_SCHEMAS, Catalog, Column, ForeignKey, Table

Rows = list[dict[str, Any]]

#: The schema a reader scaffolds when `--schema` is not given (None: the session's current
#: database, asked of the engine).
DEFAULT_SCHEMA: dict[str, str | None] = {
    "duckdb": "main",
    "postgres": "public",
    "mysql": None,
    "mariadb": None,
    "sqlite": "main",
    "clickhouse": None,
    "chdb": None,
    "spark": "default",
    "datafusion": "public",
}

_PG_SYSTEM = SYSTEM_SCHEMAS["postgres"]


def _rows(runner: Runner, sql: str) -> Rows:
    table = runner.run(sql)
    return [{k.lower(): v for k, v in row.items()} for row in table.to_pylist()]


def _one(runner: Runner, sql: str) -> Any:
    rows = _rows(runner, sql)
    return next(iter(rows[0].values())) if rows else None


def _keys(rows: Rows, kind: str) -> dict[tuple[str, str], list[tuple[str, ...]]]:
    """(table, constraint) grouped column lists of one constraint kind, in key order."""
    grouped: dict[tuple[str, str, str], list[tuple[int, str]]] = defaultdict(list)
    for r in rows:
        if r["kind"] == kind:
            grouped[(r["table_name"], r["constraint_name"], kind)].append(
                (int(r["ord"]), r["column_name"])
            )
    out: dict[tuple[str, str], list[tuple[str, ...]]] = defaultdict(list)
    for (table, name, _), cols in grouped.items():
        out[(table, name)].append(tuple(c for _, c in sorted(cols)))
    return out


def _assemble(
    schema: str | None,
    columns: Rows,
    views: set[str],
    constraints: Rows,
    fks: Rows,
) -> list[Table]:
    """Tables from column rows (`table_name, column_name, data_type, nullable, ord`),
    key rows (`table_name, constraint_name, kind in P/U, column_name, ord`) and foreign-key
    rows (`table_name, constraint_name, column_name, ord, ref_schema, ref_table, ref_column`)."""
    by_table: dict[str, list[tuple[int, Column]]] = defaultdict(list)
    for r in columns:
        nullable = str(r.get("nullable", "YES")).upper() not in ("NO", "0", "FALSE")
        by_table[r["table_name"]].append(
            (int(r["ord"]), Column(r["column_name"], str(r.get("data_type") or ""), nullable))
        )
    pks = _keys(constraints, "P")
    uniques = _keys(constraints, "U")
    fk_groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in fks:
        fk_groups[(r["table_name"], r["constraint_name"])].append(r)
    tables = []
    for name, cols in by_table.items():
        pk = next((k[0] for (t, _), k in pks.items() if t == name), ())
        uk = tuple(k[0] for (t, _), k in sorted(uniques.items()) if t == name)
        refs = []
        for (t, _), parts in sorted(fk_groups.items()):
            if t != name:
                continue
            parts = sorted(parts, key=lambda p: int(p["ord"]))
            refs.append(
                ForeignKey(
                    tuple(p["column_name"] for p in parts),
                    parts[0]["ref_table"],
                    tuple(p["ref_column"] for p in parts),
                    parts[0].get("ref_schema"),
                )
            )
        tables.append(
            Table(
                name,
                schema,
                tuple(c for _, c in sorted(cols, key=lambda x: x[0])),
                tuple(pk),
                uk,
                tuple(refs),
                is_view=name in views,
            )
        )
    return tables


# -- DuckDB --------------------------------------------------------------------------------------
_DUCK_COLUMNS = """
SELECT table_schema AS schema_name, table_name, column_name, data_type,
       is_nullable AS nullable, ordinal_position AS ord
FROM information_schema.columns
WHERE table_catalog = current_database()
"""
_DUCK_VIEWS = """
SELECT table_schema AS schema_name, table_name FROM information_schema.tables
WHERE table_catalog = current_database() AND table_type = 'VIEW'
"""
_DUCK_CONSTRAINTS = """
SELECT schema_name, table_name, constraint_type, constraint_index,
       constraint_column_names AS cols, referenced_table AS ref_table,
       referenced_column_names AS ref_cols
FROM duckdb_constraints()
WHERE database_name = current_database()
  AND constraint_type IN ('PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY')
"""


def _duckdb(runner: Runner, schema: str | None) -> tuple[str | None, list[Table]]:
    schema = schema or "main"
    cols = [r for r in _rows(runner, _DUCK_COLUMNS) if r["schema_name"] == schema]
    views = {r["table_name"] for r in _rows(runner, _DUCK_VIEWS) if r["schema_name"] == schema}
    keys: Rows = []
    fks: Rows = []
    for r in _rows(runner, _DUCK_CONSTRAINTS):
        if r["schema_name"] != schema:
            continue
        name = f"c{r['constraint_index']}"
        kind = {"PRIMARY KEY": "P", "UNIQUE": "U", "FOREIGN KEY": "F"}[r["constraint_type"]]
        for i, col in enumerate(r["cols"] or []):
            if kind == "F":
                fks.append(
                    {
                        "table_name": r["table_name"],
                        "constraint_name": name,
                        "column_name": col,
                        "ord": i,
                        "ref_schema": schema,
                        "ref_table": r["ref_table"],
                        "ref_column": (r["ref_cols"] or [])[i],
                    }
                )
            else:
                keys.append(
                    {
                        "table_name": r["table_name"],
                        "constraint_name": name,
                        "kind": kind,
                        "column_name": col,
                        "ord": i,
                    }
                )
    return schema, _assemble(schema, cols, views, keys, fks)


# -- PostgreSQL ----------------------------------------------------------------------------------
_PG_COLUMNS = """
SELECT c.table_schema AS schema_name, c.table_name, c.column_name,
       CASE WHEN c.data_type = 'USER-DEFINED' THEN c.udt_name ELSE c.data_type END AS data_type,
       c.is_nullable AS nullable, c.ordinal_position AS ord
FROM information_schema.columns c
"""
_PG_VIEWS = """
SELECT table_schema AS schema_name, table_name FROM information_schema.tables
WHERE table_type = 'VIEW'
UNION ALL
SELECT schemaname, matviewname FROM pg_matviews
"""
_PG_CONSTRAINTS = """
SELECT n.nspname AS schema_name, c.relname AS table_name, con.conname AS constraint_name,
       upper(con.contype::text) AS kind, a.attname AS column_name, k.ord AS ord,
       fn.nspname AS ref_schema, fc.relname AS ref_table, fa.attname AS ref_column
FROM pg_constraint con
JOIN pg_class c ON c.oid = con.conrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
CROSS JOIN LATERAL unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)
JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum
LEFT JOIN pg_class fc ON fc.oid = con.confrelid
LEFT JOIN pg_namespace fn ON fn.oid = fc.relnamespace
LEFT JOIN pg_attribute fa ON fa.attrelid = con.confrelid AND fa.attnum = con.confkey[k.ord]
WHERE con.contype IN ('p', 'u', 'f')
"""


def _postgres(runner: Runner, schema: str | None) -> tuple[str | None, list[Table]]:
    schema = schema or "public"
    cols = [r for r in _rows(runner, _PG_COLUMNS) if r["schema_name"] == schema]
    views = {r["table_name"] for r in _rows(runner, _PG_VIEWS) if r["schema_name"] == schema}
    cons = [r for r in _rows(runner, _PG_CONSTRAINTS) if r["schema_name"] == schema]
    keys = [r for r in cons if r["kind"] in ("P", "U")]
    fks = [r for r in cons if r["kind"] == "F"]
    return schema, _assemble(schema, cols, views, keys, fks)


# -- MySQL / MariaDB -----------------------------------------------------------------------------
_MY_COLUMNS = """
SELECT TABLE_SCHEMA AS schema_name, TABLE_NAME AS table_name, COLUMN_NAME AS column_name,
       COLUMN_TYPE AS data_type, IS_NULLABLE AS nullable, ORDINAL_POSITION AS ord
FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()
"""
_MY_VIEWS = """
SELECT TABLE_SCHEMA AS schema_name, TABLE_NAME AS table_name FROM information_schema.TABLES
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'VIEW'
"""
_MY_KEYS = """
SELECT k.TABLE_SCHEMA AS schema_name, k.TABLE_NAME AS table_name,
       k.CONSTRAINT_NAME AS constraint_name, t.CONSTRAINT_TYPE AS constraint_type,
       k.COLUMN_NAME AS column_name, k.ORDINAL_POSITION AS ord,
       k.REFERENCED_TABLE_SCHEMA AS ref_schema, k.REFERENCED_TABLE_NAME AS ref_table,
       k.REFERENCED_COLUMN_NAME AS ref_column
FROM information_schema.KEY_COLUMN_USAGE k
JOIN information_schema.TABLE_CONSTRAINTS t
  ON t.CONSTRAINT_SCHEMA = k.CONSTRAINT_SCHEMA AND t.TABLE_NAME = k.TABLE_NAME
 AND t.CONSTRAINT_NAME = k.CONSTRAINT_NAME
WHERE k.TABLE_SCHEMA = DATABASE()
"""


def _mysql(runner: Runner, schema: str | None) -> tuple[str | None, list[Table]]:
    current = _one(runner, "SELECT DATABASE() AS db")
    if schema is not None and schema != current:
        raise ArgumentError(
            f"MySQL/MariaDB scaffolds the connection's database (`{current}`), not `{schema}`",
            hint="put the database in the URI (mysql://user@host:3306/DB) and drop --schema",
        )
    if current is None:
        raise ArgumentError(
            "the MySQL/MariaDB connection has no database selected",
            hint="put the database in the URI: mysql://user@host:3306/DB",
        )
    cols = _rows(runner, _MY_COLUMNS)
    views = {r["table_name"] for r in _rows(runner, _MY_VIEWS)}
    keys: Rows = []
    fks: Rows = []
    for r in _rows(runner, _MY_KEYS):
        kind = {"PRIMARY KEY": "P", "UNIQUE": "U", "FOREIGN KEY": "F"}.get(r["constraint_type"])
        if kind == "F":
            fks.append(r)
        elif kind is not None:
            keys.append({**r, "kind": kind})
    return str(current), _assemble(str(current), cols, views, keys, fks)


# -- SQLite --------------------------------------------------------------------------------------
_SQLITE_COLUMNS = """
SELECT m.name AS table_name, m.type AS object_type, p.name AS column_name, p.type AS data_type,
       CASE WHEN p."notnull" = 1 OR p.pk > 0 THEN 'NO' ELSE 'YES' END AS nullable,
       p.cid AS ord, p.pk AS pk
FROM sqlite_master m JOIN pragma_table_info(m.name) p
WHERE m.type IN ('table', 'view') AND m.name NOT LIKE 'sqlite_%'
"""
_SQLITE_FKS = """
SELECT m.name AS table_name, f.id AS constraint_name, f."from" AS column_name, f.seq AS ord,
       f."table" AS ref_table, f."to" AS ref_column
FROM sqlite_master m JOIN pragma_foreign_key_list(m.name) f
WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'
"""
_SQLITE_UNIQUE = """
SELECT m.name AS table_name, il.name AS constraint_name, ii.name AS column_name,
       ii.seqno AS ord
FROM sqlite_master m JOIN pragma_index_list(m.name) il JOIN pragma_index_info(il.name) ii
WHERE m.type = 'table' AND il."unique" = 1 AND il.origin IN ('u', 'c') AND il.partial = 0
"""


def _sqlite(runner: Runner, schema: str | None) -> tuple[str | None, list[Table]]:
    if schema not in (None, "main"):
        raise ArgumentError(
            f"a SQLite database has one schema, `main` (got --schema {schema})",
            hint="drop --schema",
        )
    cols = _rows(runner, _SQLITE_COLUMNS)
    views = {r["table_name"] for r in cols if r["object_type"] == "view"}
    keys = [{**r, "constraint_name": "pk", "kind": "P", "ord": r["pk"]} for r in cols if r["pk"]]
    keys += [{**r, "kind": "U"} for r in _rows(runner, _SQLITE_UNIQUE)]
    fks = _rows(runner, _SQLITE_FKS)
    for fk in fks:
        if fk["ref_column"] is None:  # REFERENCES t without columns: t's primary key
            pk = sorted((r for r in cols if r["table_name"] == fk["ref_table"] and r["pk"]),
                        key=lambda r: r["pk"])  # fmt: skip
            fk["ref_column"] = pk[int(fk["ord"])]["column_name"] if len(pk) > fk["ord"] else None
    fks = [f for f in fks if f["ref_column"] is not None]
    return None, _assemble(None, cols, views, keys, fks)


# -- ClickHouse / chDB ---------------------------------------------------------------------------
_CH_COLUMNS = """
SELECT database AS schema_name, table AS table_name, name AS column_name, type AS data_type,
       position AS ord, if(startsWith(type, 'Nullable('), 'YES', 'NO') AS nullable
FROM system.columns WHERE database = currentDatabase()
"""
_CH_VIEWS = """
SELECT name AS table_name FROM system.tables
WHERE database = currentDatabase() AND engine IN ('View', 'MaterializedView')
"""


def _clickhouse(runner: Runner, schema: str | None) -> tuple[str | None, list[Table]]:
    current = _one(runner, "SELECT currentDatabase() AS db")
    if schema is not None and schema != current:
        raise ArgumentError(
            f"ClickHouse scaffolds the connection's database (`{current}`), not `{schema}`",
            hint="put the database in the URI (clickhouse://host:8123/DB) and drop --schema",
        )
    cols = _rows(runner, _CH_COLUMNS)
    views = {r["table_name"] for r in _rows(runner, _CH_VIEWS)}
    return str(current), _assemble(str(current), cols, views, [], [])


# -- Spark ---------------------------------------------------------------------------------------
def _spark(runner: Runner, schema: str | None) -> tuple[str | None, list[Table]]:
    schema = schema or "default"
    db = exp.to_identifier(schema, quoted=True).sql("spark")
    listed = _rows(runner, f"SHOW TABLES IN {db}")
    cols: Rows = []
    for t in listed:
        if t.get("istemporary"):
            continue
        name = t["tablename"]
        ref = exp.table_(name, db=schema, quoted=True).sql("spark")
        for i, r in enumerate(_rows(runner, f"DESCRIBE TABLE {ref}")):
            if not r["col_name"] or r["col_name"].startswith("#"):
                break  # the partition / detail sections follow the columns
            cols.append(
                {
                    "table_name": name,
                    "column_name": r["col_name"],
                    "data_type": r["data_type"],
                    "ord": i,
                }
            )
    return schema, _assemble(schema, cols, set(), [], [])


_SCHEMAS = {
    "duckdb": "SELECT DISTINCT table_schema AS s FROM information_schema.tables "
    "WHERE table_catalog = current_database()",
    "postgres": "SELECT DISTINCT table_schema AS s FROM information_schema.tables",
}


def _schemas_with_tables(runner: Runner, engine: str) -> list[str]:
    """The schemas that hold tables (engines with several schemas per database)."""
    sql = _SCHEMAS.get(engine)
    if sql is None:
        return []
    names = {str(r["s"]) for r in _rows(runner, sql)}
    return sorted(n for n in names if n not in _PG_SYSTEM and n != "pg_toast")


READERS: dict[str, Callable[[Runner, str | None], tuple[str | None, list[Table]]]] = {
    "duckdb": _duckdb,
    "postgres": _postgres,
    "mysql": _mysql,
    "mariadb": _mysql,
    "sqlite": _sqlite,
    "clickhouse": _clickhouse,
    "chdb": _clickhouse,
    "spark": _spark,
}


def read_catalog(
    runner: Runner, engine: str, schema: str | None = None, tables: Sequence[str] = ()
) -> Catalog:
    """The catalog of one schema (the engine's default when None), limited to `tables` when
    given (each must exist)."""
    reader = READERS.get(engine)
    if reader is None:
        raise ArgumentError(
            f"dosi init cannot read the catalog of a `{engine}` connection",
            candidates=sorted(READERS),
            hint="scaffold from one of these engines, or write the model by hand",
        )
    asked = schema
    schema, found = reader(runner, schema)
    if schema in SYSTEM_SCHEMAS.get(engine, ()):
        found = []
    others = _schemas_with_tables(runner, engine) if not found else []
    if not found and asked is None and others:
        # the default schema is empty: scaffold every schema that has tables
        for other in others:
            found += reader(runner, other)[1]
        schema = None
    elif not found:
        where = f"schema `{schema}`" if schema else "the database"
        raise ExecuteError(
            "init_no_tables",
            f"{where} holds no tables or views",
            candidates=[o for o in others if o != schema][:20],
            hint="pick a schema that has tables with --schema" if others else "load tables first",
        )
    if tables:
        names = {t.name for t in found}
        missing = [t for t in tables if t not in names]
        if missing:
            raise ExecuteError(
                "unknown_table",
                f"no table {', '.join(f'`{m}`' for m in missing)} in "
                f"{'schema `' + schema + '`' if schema else 'the database'}",
                candidates=sorted(names)[:20],
                hint="list tables of this schema with --tables, or pick another --schema",
            )
        wanted = list(dict.fromkeys(tables))
        found = sorted((t for t in found if t.name in wanted), key=lambda t: wanted.index(t.name))
    else:
        found = sorted(found, key=lambda t: t.name)
    return Catalog(engine, tuple(found), schema)
