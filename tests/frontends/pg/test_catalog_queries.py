"""Catalog discovery as BI tools run it: the catalog queries of pgjdbc (DBeaver, Metabase,
Tableau's JDBC driver), Npgsql's type loading (Power BI, Excel's ODBC-less path), DBeaver's
navigator, ADBC's type cache and information_schema, each answered by the emulated catalog
with the virtual table's columns, types and comments."""

from __future__ import annotations

import pytest

from conftest import Running
from dosi import Engine

psycopg = pytest.importorskip("psycopg")

NPGSQL_TYPES = """SELECT ns.nspname, t.oid, t.typname, t.typtype, t.typnotnull, t.elemtypoid
FROM (
    SELECT typ.oid, typ.typnamespace, typ.typname, typ.typtype, typ.typrelid, typ.typnotnull,
        typ.relkind, elemtyp.oid AS elemtypoid, elemtyp.typname AS elemtypname,
        elemcls.relkind AS elemrelkind,
        CASE WHEN elemproc.proname='array_recv' THEN 'a' ELSE elemtyp.typtype END AS elemtyptype
    FROM (
        SELECT typ.oid, typnamespace, typname, typrelid, typnotnull, relkind, typelem AS elemoid,
            CASE WHEN proc.proname='array_recv' THEN 'a' ELSE typ.typtype END AS typtype,
            CASE
                WHEN proc.proname='array_recv' THEN typ.typelem
                WHEN typ.typtype='r' THEN rngsubtype
                WHEN typ.typtype='m' THEN (SELECT rngtypid FROM pg_range WHERE rngmultitypid = typ.oid)
                WHEN typ.typtype='d' THEN typ.typbasetype
            END AS elemtypoid
        FROM pg_type AS typ
        LEFT JOIN pg_class AS cls ON (cls.oid = typ.typrelid)
        LEFT JOIN pg_proc AS proc ON proc.oid = typ.typreceive
        LEFT JOIN pg_range ON (pg_range.rngtypid = typ.oid)
    ) AS typ
    LEFT JOIN pg_type AS elemtyp ON elemtyp.oid = elemtypoid
    LEFT JOIN pg_class AS elemcls ON (elemcls.oid = elemtyp.typrelid)
    LEFT JOIN pg_proc AS elemproc ON elemproc.oid = elemtyp.typreceive
) AS t
JOIN pg_namespace AS ns ON (ns.oid = typnamespace)
WHERE typtype IN ('b', 'r', 'm', 'e', 'd') OR (typtype = 'c' AND relkind='c') OR
    (typtype = 'p' AND typname IN ('record', 'void', 'unknown')) OR
    (typtype = 'a' AND (elemtyptype IN ('b', 'r', 'm', 'e', 'd') OR
        (elemtyptype = 'p' AND elemtypname IN ('record', 'void')) OR
        (elemtyptype = 'c' AND elemrelkind='c')))
ORDER BY CASE WHEN typtype IN ('b', 'e', 'p') THEN 0 WHEN typtype = 'r' THEN 1
    WHEN typtype = 'm' THEN 2 WHEN typtype = 'c' THEN 3
    WHEN typtype = 'd' AND elemtyptype <> 'a' THEN 4 WHEN typtype = 'a' THEN 5
    WHEN typtype = 'd' AND elemtyptype = 'a' THEN 6 END"""

JDBC_TABLES = """SELECT NULL AS TABLE_CAT, n.nspname AS TABLE_SCHEM, c.relname AS TABLE_NAME,
 CASE n.nspname ~ '^pg_' OR n.nspname = 'information_schema' WHEN true THEN CASE
 WHEN n.nspname = 'pg_catalog' OR n.nspname = 'information_schema' THEN CASE c.relkind
 WHEN 'r' THEN 'SYSTEM TABLE' WHEN 'v' THEN 'SYSTEM VIEW' ELSE NULL END ELSE NULL END
 WHEN false THEN CASE c.relkind WHEN 'r' THEN 'TABLE' WHEN 'p' THEN 'PARTITIONED TABLE'
 WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE NULL END ELSE NULL END AS TABLE_TYPE,
 d.description AS REMARKS, '' as TYPE_CAT, '' as TYPE_SCHEM, '' as TYPE_NAME,
 '' AS SELF_REFERENCING_COL_NAME, '' AS REF_GENERATION
 FROM pg_catalog.pg_namespace n, pg_catalog.pg_class c
 LEFT JOIN pg_catalog.pg_description d ON (c.oid = d.objoid AND d.objsubid = 0 and
 d.classoid = 'pg_class'::regclass)
 WHERE c.relnamespace = n.oid AND c.relname LIKE '%' AND (false OR ( c.relkind = 'r' AND
 n.nspname !~ '^pg_' AND n.nspname <> 'information_schema' ))
 ORDER BY TABLE_TYPE,TABLE_SCHEM,TABLE_NAME"""

JDBC_COLUMNS = """SELECT * FROM (SELECT n.nspname,c.relname,a.attname,a.atttypid,
 a.attnotnull OR (t.typtype = 'd' AND t.typnotnull) AS attnotnull,a.atttypmod,a.attlen,
 t.typtypmod,row_number() OVER (PARTITION BY a.attrelid ORDER BY a.attnum) AS attnum,
 nullif(a.attidentity, '') as attidentity,nullif(a.attgenerated, '') as attgenerated,
 pg_catalog.pg_get_expr(def.adbin, def.adrelid) AS adsrc,dsc.description,t.typbasetype,t.typtype
 FROM pg_catalog.pg_namespace n JOIN pg_catalog.pg_class c ON (c.relnamespace = n.oid)
 JOIN pg_catalog.pg_attribute a ON (a.attrelid=c.oid)
 JOIN pg_catalog.pg_type t ON (a.atttypid = t.oid)
 LEFT JOIN pg_catalog.pg_attrdef def ON (a.attrelid=def.adrelid AND a.attnum = def.adnum)
 LEFT JOIN pg_catalog.pg_description dsc ON (c.oid=dsc.objoid AND a.attnum = dsc.objsubid)
 LEFT JOIN pg_catalog.pg_class dc ON (dc.oid=dsc.classoid AND dc.relname='pg_class')
 LEFT JOIN pg_catalog.pg_namespace dn ON (dc.relnamespace=dn.oid AND dn.nspname='pg_catalog')
 WHERE c.relkind in ('r','p','v','f','m') and a.attnum > 0 AND NOT a.attisdropped
 AND n.nspname LIKE 'public' AND c.relname LIKE 'shop') c WHERE true
 ORDER BY nspname,c.relname,attnum"""

JDBC_TYPEINFO = """SELECT typinput='pg_catalog.array_in'::regproc as is_array, typtype, typname,
 pg_type.oid FROM pg_catalog.pg_type LEFT JOIN (select ns.oid as nspoid, ns.nspname, r.r
 from pg_namespace as ns join ( select s.r, (current_schemas(false))[s.r] as nspname from
 generate_series(1, array_upper(current_schemas(false), 1)) as s(r) ) as r using ( nspname )
 ) as sp ON sp.nspoid = typnamespace WHERE pg_type.oid = %s ORDER BY sp.r, pg_type.oid DESC"""

DBEAVER = (
    "SELECT n.oid,n.*,d.description FROM pg_catalog.pg_namespace n left outer join "
    "pg_catalog.pg_description d on d.objoid=n.oid and d.objsubid=0 and "
    "d.classoid='pg_namespace'::regclass ORDER BY nspname",
    "SELECT c.oid,c.*,d.description,pg_catalog.pg_get_expr(c.relpartbound, c.oid) as "
    "partition_expr, pg_catalog.pg_get_partkeydef(c.oid) as partition_key FROM "
    "pg_catalog.pg_class c LEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=c.oid AND "
    "d.objsubid=0 AND d.classoid='pg_class'::regclass WHERE c.relnamespace=2200 AND c.relkind "
    "not in ('i','I','c')",
    "select a.*,pg_catalog.pg_get_expr(ad.adbin, ad.adrelid, true) as def_value,"
    "dsc.description,dep.objid FROM pg_catalog.pg_attribute a inner join pg_catalog.pg_class c "
    "on (a.attrelid=c.oid) left outer join pg_catalog.pg_attrdef ad on (a.attrelid=ad.adrelid "
    "and a.attnum = ad.adnum) left outer join pg_catalog.pg_description dsc on "
    "(c.oid=dsc.objoid and a.attnum = dsc.objsubid) left outer join pg_depend dep on "
    "dep.refobjid = a.attrelid AND dep.deptype = 'i' and dep.refobjsubid = a.attnum and "
    "dep.classid = dep.refclassid where NOT attisdropped and c.oid='shop'::regclass "
    "order by a.attnum",
    "SELECT db.oid,db.* FROM pg_catalog.pg_database db WHERE datname = current_database()",
    "select setting from pg_catalog.pg_settings where name='max_index_keys'",
    "SELECT * FROM pg_catalog.pg_get_keywords() WHERE catcode = 'R'",
    "SELECT pg_catalog.has_table_privilege(current_user, 'public.shop', 'SELECT'), "
    "pg_catalog.pg_is_in_recovery(), pg_catalog.pg_backend_pid(), "
    "pg_catalog.pg_encoding_to_char(6), pg_catalog.obj_description(2200, 'pg_namespace')",
)


@pytest.fixture(scope="module")
def conn(pg: Running):  # type: ignore[no-untyped-def]
    with psycopg.connect(pg.dsn(), autocommit=True) as c:
        yield c


def test_npgsql_type_loading(conn) -> None:  # type: ignore[no-untyped-def]
    rows = conn.execute(NPGSQL_TYPES).fetchall()
    by_name = {r[2]: r for r in rows}
    assert by_name["int8"][1] == 20 and by_name["numeric"][1] == 1700
    assert by_name["_int4"][3] == "a" and by_name["_int4"][5] == 23  # arrays via array_recv


def test_jdbc_tables_and_columns(conn, api: Engine) -> None:  # type: ignore[no-untyped-def]
    tables = conn.execute(JDBC_TABLES).fetchall()
    assert [(t[1], t[2], t[3]) for t in tables] == [("public", "shop", "TABLE")]
    assert tables[0][4] == api.model.description
    cols = conn.execute(JDBC_COLUMNS).fetchall()
    assert [c[2] for c in cols] == api.sql_table().names
    revenue = next(c for c in cols if c[2] == "revenue")
    assert revenue[3] == 1700 and revenue[12] == api.metric("revenue")["description"]
    assert conn.execute(JDBC_TYPEINFO, [1016]).fetchone()[:3] == (True, "b", "_int8")
    assert conn.execute(JDBC_TYPEINFO, [20]).fetchone()[:3] == (False, "b", "int8")


@pytest.mark.parametrize("sql", DBEAVER, ids=range(len(DBEAVER)))
def test_dbeaver_navigator_queries(conn, sql: str) -> None:  # type: ignore[no-untyped-def]
    rows = conn.execute(sql).fetchall()
    assert rows


def test_information_schema(conn, api: Engine) -> None:  # type: ignore[no-untyped-def]
    tables = conn.execute(
        "SELECT table_schema, table_name, table_type FROM information_schema.tables "
        "WHERE table_schema NOT IN ('pg_catalog', 'information_schema')"
    ).fetchall()
    assert tables == [("public", "shop", "BASE TABLE")]
    cols = conn.execute(
        "SELECT column_name, data_type, numeric_precision, numeric_scale "
        "FROM information_schema.columns WHERE table_name = 'shop' ORDER BY ordinal_position"
    ).fetchall()
    assert [c[0] for c in cols] == api.sql_table().names
    types = {c[0]: c[1:] for c in cols}
    assert types["revenue"] == ("numeric", 38, 2)
    assert types["order_count"][0] == "bigint"
    assert types["orders__order_date"][0] == "date"
    assert types["orders__channel"][0] == "text"


def test_catalog_functions(conn) -> None:  # type: ignore[no-untyped-def]
    row = conn.execute(
        "SELECT pg_catalog.format_type(1700, 2490374), format_type(1043, 36), "
        "'shop'::regclass::oid, 16385::regclass::text, 'int8'::regtype::oid, "
        "col_description('shop'::regclass, 1) IS NOT NULL, current_database(), "
        "pg_catalog.current_schemas(false)"
    ).fetchone()
    assert row[:6] == ("numeric(38,2)", "character varying(32)", 16385, "shop", 20, True)
    assert row[7] == ["pg_catalog", "public"]
