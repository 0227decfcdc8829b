"""Catalog emulation: `pg_catalog` and `information_schema` for the virtual table, so psql's
`\\dt` / `\\d`, SQLAlchemy reflection, JDBC metadata (DBeaver, Metabase), Npgsql and asyncpg
type loading find the model.

The emulated tables live in a private in-memory DuckDB holding nothing but catalog rows
(external access, extensions and configuration locked), never the warehouse: a catalog query
is rewritten from PostgreSQL to DuckDB SQL (schemas renamed, `::regclass` casts, operators and
PostgreSQL functions mapped to macros) and answered there.
"""

from __future__ import annotations

import threading
from typing import Any

import duckdb
import pyarrow as pa
from sqlglot import exp

from dosi import __version__
from dosi.errors import QueryError
from dosi.frontends.pg import catalog_tables as ct
from dosi.frontends.pg.pgtypes import DISPLAY, TYPES
from dosi.query.semantic_sql import VirtualTable
from dosi.query.semantic_sql.items import output_name

SERVER_VERSION = "15.0"
VERSION_TEXT = (
    f"PostgreSQL {SERVER_VERSION} (dosi {__version__} semantic layer: SQL over the models "
    "virtual tables, see docs/serving/sql.md) on x86_64-pc-linux-gnu, 64-bit"
)
KEYWORDS = [
    "all",
    "analyse",
    "analyze",
    "and",
    "any",
    "array",
    "as",
    "asc",
    "asymmetric",
    "both",
    "case",
    "cast",
    "check",
    "collate",
    "column",
    "constraint",
    "create",
    "current_catalog",
    "current_date",
    "current_role",
    "current_time",
    "current_timestamp",
    "current_user",
    "default",
    "deferrable",
    "desc",
    "distinct",
    "do",
    "else",
    "end",
    "except",
    "false",
    "fetch",
    "for",
    "foreign",
    "from",
    "grant",
    "group",
    "having",
    "in",
    "initially",
    "intersect",
    "into",
    "lateral",
    "leading",
    "limit",
    "localtime",
    "localtimestamp",
    "not",
    "null",
    "offset",
    "on",
    "only",
    "or",
    "order",
    "placing",
    "primary",
    "references",
    "returning",
    "select",
    "session_user",
    "some",
    "symmetric",
    "table",
    "then",
    "to",
    "trailing",
    "true",
    "union",
    "unique",
    "user",
    "using",
    "variadic",
    "when",
    "where",
    "window",
    "with",
]

# the system catalogs' own OIDs (`'pg_class'::regclass`, pg_description.classoid)
SYSTEM_RELATIONS = {
    1247: "pg_type",
    1249: "pg_attribute",
    1255: "pg_proc",
    1259: "pg_class",
    2604: "pg_attrdef",
    2606: "pg_constraint",
    2609: "pg_description",
    2610: "pg_index",
    2615: "pg_namespace",
    2618: "pg_rewrite",
    2620: "pg_trigger",
    1262: "pg_database",
    3456: "pg_collation",
    2601: "pg_am",
    1260: "pg_authid",
    3079: "pg_extension",
}

# PostgreSQL functions answered by macros of the same name with this prefix
PREFIX = "pg__"
_MACROS = f"""
CREATE MACRO {PREFIX}version() AS '{VERSION_TEXT}';
CREATE MACRO {PREFIX}current_schema() AS 'public';
CREATE MACRO {PREFIX}current_schemas(b) AS ['pg_catalog', 'public'];
CREATE MACRO {PREFIX}current_database() AS (SELECT datname FROM pgc.pg_database LIMIT 1);
CREATE MACRO {PREFIX}current_catalog() AS (SELECT datname FROM pgc.pg_database LIMIT 1);
CREATE MACRO {PREFIX}current_user() AS (SELECT rolname FROM pgc.pg_roles LIMIT 1);
CREATE MACRO {PREFIX}session_user() AS (SELECT rolname FROM pgc.pg_roles LIMIT 1);
CREATE MACRO {PREFIX}user() AS (SELECT rolname FROM pgc.pg_roles LIMIT 1);
CREATE MACRO {PREFIX}current_role() AS (SELECT rolname FROM pgc.pg_roles LIMIT 1);
CREATE MACRO {PREFIX}pg_get_userbyid(o) AS
  coalesce((SELECT rolname FROM pgc.pg_roles WHERE oid = o), 'unknown (OID=' || o || ')');
CREATE MACRO {PREFIX}format_type(t, m) AS CASE
  WHEN t IS NULL THEN NULL
  WHEN t = 1700 AND m >= 4 THEN 'numeric(' || ((m - 4) >> 16) || ',' || ((m - 4) & 65535) || ')'
  WHEN t IN (1043, 1042) AND m >= 4 THEN
    (SELECT display FROM pgc._typename WHERE oid = t) || '(' || (m - 4) || ')'
  ELSE coalesce((SELECT display FROM pgc._typename WHERE oid = t), '???') END;
CREATE MACRO {PREFIX}col_description(r, n) AS (SELECT max(description)
  FROM pgc.pg_description WHERE objoid = r AND objsubid = n AND classoid = 1259);
CREATE MACRO {PREFIX}obj_description(o) AS (SELECT max(description)
  FROM pgc.pg_description WHERE objoid = o AND objsubid = 0),
  (o, c) AS (SELECT max(description) FROM pgc.pg_description WHERE objoid = o AND objsubid = 0);
CREATE MACRO {PREFIX}shobj_description(o, c) AS CAST(NULL AS VARCHAR);
CREATE MACRO {PREFIX}pg_table_is_visible(o) AS true;
CREATE MACRO {PREFIX}pg_type_is_visible(o) AS true;
CREATE MACRO {PREFIX}pg_function_is_visible(o) AS true;
CREATE MACRO {PREFIX}pg_get_expr(e, r) AS CAST(e AS VARCHAR), (e, r, p) AS CAST(e AS VARCHAR);
CREATE MACRO {PREFIX}pg_get_indexdef(o) AS CAST(NULL AS VARCHAR),
  (o, c, p) AS CAST(NULL AS VARCHAR);
CREATE MACRO {PREFIX}pg_get_constraintdef(o) AS CAST(NULL AS VARCHAR),
  (o, p) AS CAST(NULL AS VARCHAR);
CREATE MACRO {PREFIX}pg_get_viewdef(o) AS CAST(NULL AS VARCHAR),
  (o, p) AS CAST(NULL AS VARCHAR);
CREATE MACRO {PREFIX}pg_get_triggerdef(o) AS CAST(NULL AS VARCHAR),
  (o, p) AS CAST(NULL AS VARCHAR);
CREATE MACRO {PREFIX}pg_get_ruledef(o) AS CAST(NULL AS VARCHAR),
  (o, p) AS CAST(NULL AS VARCHAR);
CREATE MACRO {PREFIX}pg_get_partkeydef(o) AS CAST(NULL AS VARCHAR);
CREATE MACRO {PREFIX}pg_get_statisticsobjdef_columns(o) AS CAST(NULL AS VARCHAR);
CREATE MACRO {PREFIX}pg_get_function_arguments(o) AS CAST(NULL AS VARCHAR);
CREATE MACRO {PREFIX}pg_get_function_result(o) AS CAST(NULL AS VARCHAR);
CREATE MACRO {PREFIX}pg_get_function_identity_arguments(o) AS CAST(NULL AS VARCHAR);
CREATE MACRO {PREFIX}pg_get_serial_sequence(t, c) AS CAST(NULL AS VARCHAR);
CREATE MACRO {PREFIX}pg_relation_is_publishable(o) AS false;
CREATE MACRO {PREFIX}pg_encoding_to_char(e) AS 'UTF8';
CREATE MACRO {PREFIX}pg_char_to_encoding(e) AS 6;
CREATE MACRO {PREFIX}has_table_privilege(a) AS true, (a, b) AS true, (a, b, c) AS true;
CREATE MACRO {PREFIX}has_schema_privilege(a) AS true, (a, b) AS true, (a, b, c) AS true;
CREATE MACRO {PREFIX}has_database_privilege(a) AS true, (a, b) AS true, (a, b, c) AS true;
CREATE MACRO {PREFIX}has_column_privilege(a, b) AS true, (a, b, c) AS true,
  (a, b, c, d) AS true;
CREATE MACRO {PREFIX}has_any_column_privilege(a, b) AS true, (a, b, c) AS true;
CREATE MACRO {PREFIX}has_function_privilege(a, b) AS true, (a, b, c) AS true;
CREATE MACRO {PREFIX}has_sequence_privilege(a, b) AS true, (a, b, c) AS true;
CREATE MACRO {PREFIX}pg_has_role(a, b) AS true, (a, b, c) AS true;
CREATE MACRO {PREFIX}pg_backend_pid() AS 1;
CREATE MACRO {PREFIX}pg_is_in_recovery() AS false;
CREATE MACRO {PREFIX}pg_postmaster_start_time() AS TIMESTAMP '2000-01-01 00:00:00';
CREATE MACRO {PREFIX}inet_server_addr() AS CAST(NULL AS VARCHAR);
CREATE MACRO {PREFIX}inet_server_port() AS CAST(NULL AS INTEGER);
CREATE MACRO {PREFIX}inet_client_addr() AS CAST(NULL AS VARCHAR);
CREATE MACRO {PREFIX}txid_current() AS CAST(1 AS BIGINT);
CREATE MACRO {PREFIX}pg_current_xact_id() AS CAST(1 AS BIGINT);
CREATE MACRO {PREFIX}pg_total_relation_size(o) AS CAST(0 AS BIGINT);
CREATE MACRO {PREFIX}pg_relation_size(o) AS CAST(0 AS BIGINT), (o, f) AS CAST(0 AS BIGINT);
CREATE MACRO {PREFIX}pg_table_size(o) AS CAST(0 AS BIGINT);
CREATE MACRO {PREFIX}pg_indexes_size(o) AS CAST(0 AS BIGINT);
CREATE MACRO {PREFIX}pg_database_size(o) AS CAST(0 AS BIGINT);
CREATE MACRO {PREFIX}pg_size_pretty(b) AS b || ' bytes';
CREATE MACRO {PREFIX}pg_tablespace_location(o) AS '';
CREATE MACRO {PREFIX}quote_ident(s) AS CASE WHEN regexp_full_match(s, '[a-z_][a-z0-9_]*')
  THEN s ELSE chr(34) || replace(s, chr(34), chr(34) || chr(34)) || chr(34) END;
CREATE MACRO {PREFIX}current_setting(n) AS
  (SELECT setting FROM pgc.pg_settings WHERE name = lower(n)),
  (n, m) AS (SELECT setting FROM pgc.pg_settings WHERE name = lower(n));
CREATE MACRO {PREFIX}set_config(n, v, l) AS v;
CREATE MACRO {PREFIX}array_lower(a, d) AS CASE WHEN len(a) > 0 THEN 1 END;
CREATE MACRO {PREFIX}array_upper(a, d) AS CASE WHEN len(a) > 0 THEN len(a) END;
CREATE MACRO {PREFIX}array_length(a, d) AS CASE WHEN len(a) > 0 THEN len(a) END;
CREATE MACRO {PREFIX}pg_get_keywords() AS TABLE SELECT * FROM pgc._keywords;
CREATE MACRO {PREFIX}regclass_oid(s) AS coalesce(
  (SELECT max(oid) FROM pgc.pg_class
   WHERE relname = replace(regexp_replace(s, '^.*[.]', ''), chr(34), '')),
  (SELECT max(oid) FROM pgc._sysrel
   WHERE relname = replace(regexp_replace(s, '^.*[.]', ''), chr(34), '')));
CREATE MACRO {PREFIX}regclass_name(o) AS coalesce(
  (SELECT max(relname) FROM pgc.pg_class WHERE oid = o),
  (SELECT max(relname) FROM pgc._sysrel WHERE oid = o), CAST(o AS VARCHAR));
CREATE MACRO {PREFIX}regtype_oid(s) AS (SELECT max(oid) FROM pgc._typename
  WHERE typname = lower(replace(regexp_replace(s, '^pg_catalog[.]', ''), chr(34), ''))
     OR display = lower(s));
CREATE MACRO {PREFIX}regtype_name(o) AS {PREFIX}format_type(o, NULL);
CREATE MACRO {PREFIX}regnamespace_oid(s) AS
  (SELECT max(oid) FROM pgc.pg_namespace WHERE nspname = replace(s, chr(34), ''));
CREATE MACRO {PREFIX}regnamespace_name(o) AS
  coalesce((SELECT max(nspname) FROM pgc.pg_namespace WHERE oid = o), CAST(o AS VARCHAR));
CREATE MACRO {PREFIX}regproc_name(o) AS CAST(o AS VARCHAR);
CREATE MACRO {PREFIX}regproc_oid(s) AS regexp_replace(s, '^pg_catalog[.]', '');
CREATE MACRO {PREFIX}regrole_name(o) AS {PREFIX}pg_get_userbyid(o);
CREATE MACRO {PREFIX}regrole_oid(s) AS (SELECT max(oid) FROM pgc.pg_roles WHERE rolname = s);
CREATE MACRO {PREFIX}to_regclass(s) AS {PREFIX}regclass_oid(s);
CREATE MACRO {PREFIX}to_regtype(s) AS {PREFIX}regtype_oid(s);
CREATE MACRO {PREFIX}to_regnamespace(s) AS {PREFIX}regnamespace_oid(s);
CREATE MACRO {PREFIX}age(x) AS CAST(0 AS INTEGER);
CREATE MACRO {PREFIX}pg_collation_is_visible(o) AS true;
CREATE MACRO {PREFIX}pg_opclass_is_visible(o) AS true;
CREATE MACRO {PREFIX}pg_get_constraintdef_columns(o) AS CAST(NULL AS VARCHAR);
"""
# json_build_object and friends: only read for identity / collation details a semantic table
# never has, so any arity answers NULL
_MACROS += "".join(
    f"CREATE MACRO {PREFIX}{name}"
    + ", ".join(
        "(" + ", ".join(f"a{i}" for i in range(n)) + ") AS CAST(NULL AS VARCHAR)"
        for n in range(0, 25)
    )
    + ";\n"
    for name in ("json_build_object", "jsonb_build_object", "json_build_array")
)
FUNCTIONS = frozenset(
    line.split("(")[0].split(PREFIX)[1]
    for line in _MACROS.splitlines()
    if line.startswith("CREATE MACRO ")
)

_SETTINGS = {
    "server_version": SERVER_VERSION,
    "server_version_num": "150000",
    "server_encoding": "UTF8",
    "client_encoding": "UTF8",
    "datestyle": "ISO, MDY",
    "intervalstyle": "postgres",
    "timezone": "UTC",
    "integer_datetimes": "on",
    "standard_conforming_strings": "on",
    "max_identifier_length": "63",
    "search_path": '"$user", public',
    "transaction_isolation": "read committed",
    "default_transaction_isolation": "read committed",
    "transaction_read_only": "on",
    "default_transaction_read_only": "on",
    "is_superuser": "off",
    "lc_collate": "C.UTF-8",
    "lc_ctype": "C.UTF-8",
    "lc_messages": "C.UTF-8",
    "lc_monetary": "C.UTF-8",
    "lc_numeric": "C.UTF-8",
    "lc_time": "C.UTF-8",
    "extra_float_digits": "1",
    "application_name": "",
    "statement_timeout": "0",
    "max_index_keys": "32",
    "block_size": "8192",
    "bytea_output": "hex",
    "escape_string_warning": "on",
    "row_security": "on",
    "jit": "off",
}


def default_settings() -> dict[str, str]:
    return dict(_SETTINGS)


class Catalog:
    """The emulated catalog of one model version."""

    def __init__(
        self,
        table: VirtualTable,
        types: dict[str, pa.DataType],
        database: str = "dosi",
        user: str = "dosi",
    ) -> None:
        self.table = table
        self.columns = ct.catalog_columns(table, types)
        con = duckdb.connect(
            ":memory:",
            config={
                "autoinstall_known_extensions": "false",
                "autoload_known_extensions": "false",
            },
        )
        con.execute("CREATE SCHEMA pgc; CREATE SCHEMA isc")
        for name, cols in ct.PG_CATALOG.items():
            con.execute(f"CREATE TABLE pgc.{name} ({cols})")
        for name, cols in ct.INFORMATION_SCHEMA.items():
            con.execute(f"CREATE TABLE isc.{name} ({cols})")
        con.execute("CREATE TABLE pgc._typename (oid INTEGER, typname VARCHAR, display VARCHAR)")
        con.execute("CREATE TABLE pgc._sysrel (oid INTEGER, relname VARCHAR)")
        con.executemany("INSERT INTO pgc._sysrel VALUES (?, ?)", list(SYSTEM_RELATIONS.items()))
        con.executemany(
            "INSERT INTO pgc._typename VALUES (?, ?, ?)",
            [
                row
                for t in TYPES
                for row in (
                    (t.oid, t.name, DISPLAY.get(t.name, t.name)),
                    *(
                        ((t.array_oid, f"_{t.name}", DISPLAY.get(t.name, t.name) + "[]"),)
                        if t.array_oid
                        else ()
                    ),
                )
            ]
            + [(ct.ROWTYPE_OID, table.name, table.name)],
        )
        con.execute(
            "CREATE TABLE pgc._keywords (word VARCHAR, catcode VARCHAR, "
            "barelabel BOOLEAN, catdesc VARCHAR, baredesc VARCHAR)"
        )
        con.executemany(
            "INSERT INTO pgc._keywords VALUES (?, 'R', true, 'reserved', 'can be bare label')",
            [(k,) for k in KEYWORDS],
        )
        data = ct.rows(table, self.columns, database, user)
        data["pg_settings"] = [
            (
                k,
                v,
                None,
                "dosi",
                None,
                None,
                "user",
                "string",
                "default",
                None,
                None,
                None,
                v,
                v,
                None,
                None,
                False,
            )
            for k, v in _SETTINGS.items()
        ]
        for name, rows in data.items():
            if not rows:
                continue
            schema = "isc" if name in ct.INFORMATION_SCHEMA else "pgc"
            marks = ", ".join("?" * len(rows[0]))
            con.executemany(f"INSERT INTO {schema}.{name} VALUES ({marks})", rows)
        con.execute(_MACROS)
        con.execute("SET search_path = 'pgc,main'")
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
        self._con = con
        self._lock = threading.Lock()

    def run(self, tree: exp.Expression, timeout: float | None = None) -> pa.Table:
        """Answer a catalog query (already bound: no parameters left)."""
        sql = to_duckdb(tree)
        with self._lock:
            cur = self._con.cursor()
        try:
            return cur.sql(sql).to_arrow_table()
        except duckdb.Error as exc:
            raise QueryError(
                "catalog_query_failed",
                f"the catalog cannot answer this query: {str(exc).splitlines()[0]}",
                hint="the catalog emulates pg_catalog and information_schema for the "
                "semantic tables; see docs/serving/sql.md",
            ) from None
        finally:
            cur.close()


_CAST_TYPES = {
    "oid": "INTEGER",
    "regproc": "VARCHAR",
    "xid": "BIGINT",
    "cid": "BIGINT",
    "int2": "SMALLINT",
    "int4": "INTEGER",
    "int8": "BIGINT",
    "name": "VARCHAR",
    "char": "VARCHAR",
    "text": "VARCHAR",
    "bpchar": "VARCHAR",
    "varchar": "VARCHAR",
    "int2vector": "SMALLINT[]",
    "oidvector": "INTEGER[]",
    "pg_node_tree": "VARCHAR",
    "aclitem": "VARCHAR",
    "bool": "BOOLEAN",
}
_REG = (
    "regclass",
    "regtype",
    "regnamespace",
    "regproc",
    "regprocedure",
    "regrole",
    "regoper",
    "regoperator",
    "regconfig",
    "regdictionary",
    "regcollation",
)
_OPERATORS: dict[str, Any] = {
    "~": lambda a, b: exp.RegexpLike(this=a, expression=b),
    "!~": lambda a, b: exp.not_(exp.RegexpLike(this=a, expression=b)),
    "~*": lambda a, b: exp.RegexpILike(this=a, expression=b),
    "!~*": lambda a, b: exp.not_(exp.RegexpILike(this=a, expression=b)),
    "~~": lambda a, b: exp.Like(this=a, expression=b),
    "!~~": lambda a, b: exp.not_(exp.Like(this=a, expression=b)),
    "~~*": lambda a, b: exp.ILike(this=a, expression=b),
    "=": lambda a, b: exp.EQ(this=a, expression=b),
    "<>": lambda a, b: exp.NEQ(this=a, expression=b),
    "<": lambda a, b: exp.LT(this=a, expression=b),
    ">": lambda a, b: exp.GT(this=a, expression=b),
    "<=": lambda a, b: exp.LTE(this=a, expression=b),
    ">=": lambda a, b: exp.GTE(this=a, expression=b),
}
_NAMED = {
    exp.CurrentUser: "current_user",
    exp.SessionUser: "session_user",
    exp.CurrentSchema: "current_schema",
    exp.CurrentVersion: "version",
}
_REGPROC_COLUMNS = frozenset(
    {
        "typinput",
        "typoutput",
        "typreceive",
        "typsend",
        "typmodin",
        "typmodout",
        "typanalyze",
        "typsubscript",
        "aggfnoid",
        "amhandler",
    }
)


def _type_name(dt: exp.DataType) -> str | None:
    if isinstance(dt, exp.ObjectIdentifier):
        return dt.name.lower()
    if not isinstance(dt, exp.DataType):
        return None
    if dt.this == exp.DataType.Type.USERDEFINED:
        kind = dt.args.get("kind")
        if isinstance(kind, exp.Dot):
            return kind.expression.name.lower()
        return kind.name.lower() if kind is not None else None
    if dt.this == exp.DataType.Type.NAME:
        return "name"
    if dt.this == exp.DataType.Type.ARRAY and dt.expressions:
        inner = _type_name(dt.expressions[0])
        return f"{inner}[]" if inner else None
    return None


def _cast(node: exp.Cast) -> exp.Expression:
    name = _type_name(node.to)
    if name is None:
        return node
    if name in _REG:
        value = node.this
        kind = (
            "regproc"
            if name
            in (
                "regprocedure",
                "regoper",
                "regoperator",
                "regconfig",
                "regdictionary",
                "regcollation",
            )
            else name
        )
        if isinstance(value, exp.Literal) and value.is_string:
            return exp.Anonymous(this=f"{PREFIX}{kind}_oid", expressions=[value])
        return exp.Anonymous(this=f"{PREFIX}{kind}_name", expressions=[value])
    base = name[:-2] if name.endswith("[]") else name
    target = _CAST_TYPES.get(base)
    if target is None:
        return node
    if name.endswith("[]") and not target.endswith("[]"):
        target += "[]"
    return exp.Cast(this=node.this, to=exp.DataType.build(target, dialect="duckdb"))


def _rewrite(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.Table):
        db = node.args.get("db")
        if isinstance(node.this, exp.Func):  # a table function: pg_catalog.unnest(...)
            node.set("db", None)
        elif db is None and node.name.lower() in ct.PG_CATALOG and not node.meta.get("cte"):
            node.set("db", exp.to_identifier("pgc"))  # pg_catalog is on every search path
        elif db is not None:
            schema = db.name.lower()
            if schema == "pg_catalog":
                node.set("db", exp.to_identifier("pgc"))
            elif schema == "information_schema":
                node.set("db", exp.to_identifier("isc"))
        node.set("catalog", None)
        return node
    if isinstance(node, exp.Column) and node.args.get("db") is not None:
        schema = node.args["db"].name.lower()
        if schema in ("pg_catalog", "information_schema"):
            node.set("db", exp.to_identifier("pgc" if schema == "pg_catalog" else "isc"))
        node.set("catalog", None)
        return node
    if (
        isinstance(node, exp.Dot)
        and isinstance(node.this, (exp.Identifier, exp.Column))
        and (node.this.name.lower() == "pg_catalog" and isinstance(node.expression, exp.Func))
    ):
        return _rewrite(node.expression)
    if isinstance(node, exp.Collate):
        return node.this
    if isinstance(node, exp.Operator):
        op = str(node.args.get("operator") or "").split(".")[-1].strip()
        make = _OPERATORS.get(op)
        if make is not None:
            return make(node.this, node.expression)
        return node
    if isinstance(node, exp.Cast):
        return _cast(node)
    for kind, name in _NAMED.items():
        if isinstance(node, kind):
            return exp.Anonymous(this=f"{PREFIX}{name}", expressions=[])
    if (
        isinstance(node, exp.Column)
        and not node.table
        and node.name.lower()
        in (
            "current_user",
            "session_user",
            "user",
            "current_role",
            "current_catalog",
            "current_schema",
        )
        and not node.this.quoted
    ):
        return exp.Anonymous(this=f"{PREFIX}{node.name.lower()}", expressions=[])
    if isinstance(node, exp.Func):
        name = (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()
        if name in FUNCTIONS:
            args = (
                list(node.args.get("expressions") or [])
                if isinstance(node, exp.Anonymous)
                else [a for a in node.args.values() if isinstance(a, exp.Expression)]
            )
            return exp.Anonymous(this=f"{PREFIX}{name}", expressions=args)
    if isinstance(node, (exp.EQ, exp.NEQ)) and isinstance(node.expression, exp.Any):
        target = node.expression.this
        if not isinstance(target, (exp.Subquery, exp.Select)):
            hit = exp.Anonymous(this="list_contains", expressions=[target, node.this])
            return hit if isinstance(node, exp.EQ) else exp.not_(hit)
    if isinstance(node, exp.EQ) and all(
        isinstance(x, exp.Column) for x in (node.this, node.expression)
    ):
        a, b = node.this, node.expression
        if a.name.lower() in _REGPROC_COLUMNS and b.name.lower() == "oid":
            a, b = b, a
        if a.name.lower() == "oid" and b.name.lower() in _REGPROC_COLUMNS:
            # pg_proc.oid = pg_type.typreceive: regproc columns hold names here
            return exp.EQ(this=exp.column("proname", table=a.table), expression=b)
    if isinstance(node, (exp.EQ, exp.NEQ)):
        col, lit = node.this, node.expression
        if (
            isinstance(col, exp.Column)
            and col.name.lower() in _REGPROC_COLUMNS
            and (isinstance(lit, exp.Literal) and not lit.is_string and lit.this == "0")
        ):
            node.set("expression", exp.Literal.string("-"))
    return node


def to_duckdb(tree: exp.Expression) -> str:
    """A PostgreSQL catalog query as DuckDB SQL over the emulated tables, its result columns
    named as PostgreSQL names them."""
    tree = tree.copy()
    if isinstance(tree, exp.Select):
        tree.set(
            "expressions",
            [
                e
                if isinstance(e, (exp.Alias, exp.Star))
                or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
                else exp.alias_(e, _pg_name(e), quoted=True)
                for e in tree.expressions
            ],
        )
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    for t in tree.find_all(exp.Table):
        if t.name.lower() in ctes and not t.db:
            t.meta["cte"] = True
    return _bottom_up(tree).sql(dialect="duckdb")


def _pg_name(node: exp.Expression) -> str:
    if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Func):
        return output_name(node.expression)
    return output_name(node)


def _bottom_up(node: exp.Expression) -> exp.Expression:
    """Rewrite children before their parent (a cast inside a cast, a subquery in a CASE)."""
    for child in list(node.iter_expressions()):
        new = _bottom_up(child)
        if new is not child:
            child.replace(new)
    return _rewrite(node)
