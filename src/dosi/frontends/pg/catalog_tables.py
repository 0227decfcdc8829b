"""The rows of the emulated `pg_catalog` and `information_schema`: what a PostgreSQL server
holding the virtual table (its columns, types and comments) would answer.

Tables BI tools read but a semantic table has nothing for (indexes, constraints, policies,
publications...) exist with their columns and no rows, so a catalog query binds and answers
empty, as it would on a database without them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from dosi.frontends.pg.pgtypes import TYPES, ColumnType, column_type, format_type
from dosi.query.semantic_sql import SCHEMA, VirtualTable

NS_CATALOG, NS_PUBLIC, NS_INFO = 11, 2200, 13183
TABLE_OID = 16385
ROWTYPE_OID, ROWTYPE_ARRAY_OID = 16387, 16386
OWNER_OID = 10
PG_CLASS_OID = 1259
DATABASE_OID = 16384

# table -> columns (name DUCKDB_TYPE); `pgc` emulates pg_catalog, `isc` information_schema
PG_CATALOG: dict[str, str] = {
    "pg_namespace": "oid INTEGER, nspname VARCHAR, nspowner INTEGER, nspacl VARCHAR[]",
    "pg_class": (
        "oid INTEGER, relname VARCHAR, relnamespace INTEGER, reltype INTEGER, "
        "reloftype INTEGER, relowner INTEGER, relam INTEGER, relfilenode INTEGER, "
        "reltablespace INTEGER, relpages INTEGER, reltuples REAL, relallvisible INTEGER, "
        "reltoastrelid INTEGER, relhasindex BOOLEAN, relisshared BOOLEAN, "
        "relpersistence VARCHAR, relkind VARCHAR, relnatts SMALLINT, relchecks SMALLINT, "
        "relhasrules BOOLEAN, relhastriggers BOOLEAN, relhassubclass BOOLEAN, "
        "relrowsecurity BOOLEAN, relforcerowsecurity BOOLEAN, relispopulated BOOLEAN, "
        "relreplident VARCHAR, relispartition BOOLEAN, relrewrite INTEGER, "
        "relfrozenxid INTEGER, relminmxid INTEGER, relacl VARCHAR[], reloptions VARCHAR[], "
        "relpartbound VARCHAR, relhasoids BOOLEAN"
    ),
    "pg_attribute": (
        "attrelid INTEGER, attname VARCHAR, atttypid INTEGER, attstattarget INTEGER, "
        "attlen SMALLINT, attnum SMALLINT, attndims INTEGER, attcacheoff INTEGER, "
        "atttypmod INTEGER, attbyval BOOLEAN, attalign VARCHAR, attstorage VARCHAR, "
        "attcompression VARCHAR, attnotnull BOOLEAN, atthasdef BOOLEAN, "
        "atthasmissing BOOLEAN, attidentity VARCHAR, attgenerated VARCHAR, "
        "attisdropped BOOLEAN, attislocal BOOLEAN, attinhcount INTEGER, "
        "attcollation INTEGER, attacl VARCHAR[], attoptions VARCHAR[], "
        "attfdwoptions VARCHAR[], attmissingval VARCHAR"
    ),
    "pg_type": (
        "oid INTEGER, typname VARCHAR, typnamespace INTEGER, typowner INTEGER, "
        "typlen SMALLINT, typbyval BOOLEAN, typtype VARCHAR, typcategory VARCHAR, "
        "typispreferred BOOLEAN, typisdefined BOOLEAN, typdelim VARCHAR, typrelid INTEGER, "
        "typsubscript VARCHAR, typelem INTEGER, typarray INTEGER, typinput VARCHAR, "
        "typoutput VARCHAR, typreceive VARCHAR, typsend VARCHAR, typmodin VARCHAR, "
        "typmodout VARCHAR, typanalyze VARCHAR, typalign VARCHAR, typstorage VARCHAR, "
        "typnotnull BOOLEAN, typbasetype INTEGER, typtypmod INTEGER, typndims INTEGER, "
        "typcollation INTEGER, typdefaultbin VARCHAR, typdefault VARCHAR, typacl VARCHAR[]"
    ),
    "pg_description": "objoid INTEGER, classoid INTEGER, objsubid INTEGER, description VARCHAR",
    "pg_shdescription": "objoid INTEGER, classoid INTEGER, description VARCHAR",
    "pg_database": (
        "oid INTEGER, datname VARCHAR, datdba INTEGER, encoding INTEGER, "
        "datlocprovider VARCHAR, datistemplate BOOLEAN, datallowconn BOOLEAN, "
        "datconnlimit INTEGER, datfrozenxid INTEGER, datminmxid INTEGER, "
        "dattablespace INTEGER, datcollate VARCHAR, datctype VARCHAR, "
        "daticulocale VARCHAR, datcollversion VARCHAR, datacl VARCHAR[], "
        "datlastsysoid INTEGER"
    ),
    "pg_roles": (
        "oid INTEGER, rolname VARCHAR, rolsuper BOOLEAN, rolinherit BOOLEAN, "
        "rolcreaterole BOOLEAN, rolcreatedb BOOLEAN, rolcanlogin BOOLEAN, "
        "rolreplication BOOLEAN, rolconnlimit INTEGER, rolpassword VARCHAR, "
        "rolvaliduntil TIMESTAMP, rolbypassrls BOOLEAN, rolconfig VARCHAR[]"
    ),
    "pg_user": (
        "usename VARCHAR, usesysid INTEGER, usecreatedb BOOLEAN, usesuper BOOLEAN, "
        "userepl BOOLEAN, usebypassrls BOOLEAN, passwd VARCHAR, valuntil TIMESTAMP, "
        "useconfig VARCHAR[]"
    ),
    "pg_auth_members": "oid INTEGER, roleid INTEGER, member INTEGER, grantor INTEGER, "
    "admin_option BOOLEAN, inherit_option BOOLEAN, set_option BOOLEAN",
    "pg_am": "oid INTEGER, amname VARCHAR, amhandler VARCHAR, amtype VARCHAR",
    "pg_attrdef": "oid INTEGER, adrelid INTEGER, adnum SMALLINT, adbin VARCHAR",
    "pg_index": (
        "indexrelid INTEGER, indrelid INTEGER, indnatts SMALLINT, indnkeyatts SMALLINT, "
        "indisunique BOOLEAN, indnullsnotdistinct BOOLEAN, indisprimary BOOLEAN, "
        "indisexclusion BOOLEAN, indimmediate BOOLEAN, indisclustered BOOLEAN, "
        "indisvalid BOOLEAN, indcheckxmin BOOLEAN, indisready BOOLEAN, indislive BOOLEAN, "
        "indisreplident BOOLEAN, indkey SMALLINT[], indcollation INTEGER[], "
        "indclass INTEGER[], indoption SMALLINT[], indexprs VARCHAR, indpred VARCHAR"
    ),
    "pg_constraint": (
        "oid INTEGER, conname VARCHAR, connamespace INTEGER, contype VARCHAR, "
        "condeferrable BOOLEAN, condeferred BOOLEAN, convalidated BOOLEAN, "
        "conrelid INTEGER, contypid INTEGER, conindid INTEGER, conparentid INTEGER, "
        "confrelid INTEGER, confupdtype VARCHAR, confdeltype VARCHAR, "
        "confmatchtype VARCHAR, conislocal BOOLEAN, coninhcount INTEGER, "
        "connoinherit BOOLEAN, conkey SMALLINT[], confkey SMALLINT[], conpfeqop INTEGER[], "
        "conppeqop INTEGER[], conffeqop INTEGER[], confdelsetcols SMALLINT[], "
        "conexclop INTEGER[], conbin VARCHAR"
    ),
    "pg_inherits": "inhrelid INTEGER, inhparent INTEGER, inhseqno INTEGER, "
    "inhdetachpending BOOLEAN",
    "pg_policy": "oid INTEGER, polname VARCHAR, polrelid INTEGER, polcmd VARCHAR, "
    "polpermissive BOOLEAN, polroles INTEGER[], polqual VARCHAR, polwithcheck VARCHAR",
    "pg_statistic_ext": "oid INTEGER, stxrelid INTEGER, stxname VARCHAR, "
    "stxnamespace INTEGER, stxowner INTEGER, stxstattarget INTEGER, stxkeys SMALLINT[], "
    "stxkind VARCHAR[], stxexprs VARCHAR",
    "pg_publication": "oid INTEGER, pubname VARCHAR, pubowner INTEGER, "
    "puballtables BOOLEAN, pubinsert BOOLEAN, pubupdate BOOLEAN, pubdelete BOOLEAN, "
    "pubtruncate BOOLEAN, pubviaroot BOOLEAN",
    "pg_publication_namespace": "oid INTEGER, pnpubid INTEGER, pnnspid INTEGER",
    "pg_publication_rel": "oid INTEGER, prpubid INTEGER, prrelid INTEGER, prqual VARCHAR, "
    "prattrs SMALLINT[]",
    "pg_trigger": "oid INTEGER, tgrelid INTEGER, tgparentid INTEGER, tgname VARCHAR, "
    "tgfoid INTEGER, tgtype SMALLINT, tgenabled VARCHAR, tgisinternal BOOLEAN, "
    "tgconstrrelid INTEGER, tgconstrindid INTEGER, tgconstraint INTEGER, "
    "tgdeferrable BOOLEAN, tginitdeferred BOOLEAN, tgnargs SMALLINT, tgattr SMALLINT[], "
    "tgargs VARCHAR, tgqual VARCHAR, tgoldtable VARCHAR, tgnewtable VARCHAR",
    "pg_rewrite": "oid INTEGER, rulename VARCHAR, ev_class INTEGER, ev_type VARCHAR, "
    "ev_enabled VARCHAR, is_instead BOOLEAN, ev_qual VARCHAR, ev_action VARCHAR",
    "pg_collation": "oid INTEGER, collname VARCHAR, collnamespace INTEGER, "
    "collowner INTEGER, collprovider VARCHAR, collisdeterministic BOOLEAN, "
    "collencoding INTEGER, collcollate VARCHAR, collctype VARCHAR",
    "pg_enum": "oid INTEGER, enumtypid INTEGER, enumsortorder REAL, enumlabel VARCHAR",
    "pg_range": "rngtypid INTEGER, rngsubtype INTEGER, rngmultitypid INTEGER, "
    "rngcollation INTEGER, rngsubopc INTEGER, rngcanonical VARCHAR, rngsubdiff VARCHAR",
    "pg_proc": "oid INTEGER, proname VARCHAR, pronamespace INTEGER, proowner INTEGER, "
    "prolang INTEGER, prokind VARCHAR, proretset BOOLEAN, prorettype INTEGER, "
    "pronargs SMALLINT, proargtypes INTEGER[], proallargtypes INTEGER[], "
    "proargmodes VARCHAR[], proargnames VARCHAR[], prosrc VARCHAR",
    "pg_tablespace": "oid INTEGER, spcname VARCHAR, spcowner INTEGER, spcacl VARCHAR[], "
    "spcoptions VARCHAR[]",
    "pg_extension": "oid INTEGER, extname VARCHAR, extowner INTEGER, "
    "extnamespace INTEGER, extrelocatable BOOLEAN, extversion VARCHAR",
    "pg_depend": "classid INTEGER, objid INTEGER, objsubid INTEGER, refclassid INTEGER, "
    "refobjid INTEGER, refobjsubid INTEGER, deptype VARCHAR",
    "pg_foreign_table": "ftrelid INTEGER, ftserver INTEGER, ftoptions VARCHAR[]",
    "pg_partitioned_table": "partrelid INTEGER, partstrat VARCHAR, partnatts SMALLINT, "
    "partdefid INTEGER, partattrs SMALLINT[]",
    "pg_sequence": "seqrelid INTEGER, seqtypid INTEGER, seqstart BIGINT, "
    "seqincrement BIGINT, seqmax BIGINT, seqmin BIGINT, seqcache BIGINT, seqcycle BOOLEAN",
    "pg_language": "oid INTEGER, lanname VARCHAR, lanowner INTEGER, lanispl BOOLEAN",
    "pg_event_trigger": "oid INTEGER, evtname VARCHAR, evtevent VARCHAR, evtowner INTEGER",
    "pg_cast": "oid INTEGER, castsource INTEGER, casttarget INTEGER, castfunc INTEGER, "
    "castcontext VARCHAR, castmethod VARCHAR",
    "pg_operator": "oid INTEGER, oprname VARCHAR, oprnamespace INTEGER, oprleft INTEGER, "
    "oprright INTEGER, oprresult INTEGER",
    "pg_opclass": "oid INTEGER, opcmethod INTEGER, opcname VARCHAR, opcnamespace INTEGER, "
    "opcowner INTEGER, opcfamily INTEGER, opcintype INTEGER, opcdefault BOOLEAN, "
    "opckeytype INTEGER",
    "pg_aggregate": "aggfnoid VARCHAR, aggkind VARCHAR, aggnumdirectargs SMALLINT",
    "pg_settings": "name VARCHAR, setting VARCHAR, unit VARCHAR, category VARCHAR, "
    "short_desc VARCHAR, extra_desc VARCHAR, context VARCHAR, vartype VARCHAR, "
    "source VARCHAR, min_val VARCHAR, max_val VARCHAR, enumvals VARCHAR[], "
    "boot_val VARCHAR, reset_val VARCHAR, sourcefile VARCHAR, sourceline INTEGER, "
    "pending_restart BOOLEAN",
    "pg_tables": "schemaname VARCHAR, tablename VARCHAR, tableowner VARCHAR, "
    "tablespace VARCHAR, hasindexes BOOLEAN, hasrules BOOLEAN, hastriggers BOOLEAN, "
    "rowsecurity BOOLEAN",
    "pg_views": "schemaname VARCHAR, viewname VARCHAR, viewowner VARCHAR, definition VARCHAR",
    "pg_matviews": "schemaname VARCHAR, matviewname VARCHAR, matviewowner VARCHAR, "
    "tablespace VARCHAR, hasindexes BOOLEAN, ispopulated BOOLEAN, definition VARCHAR",
    "pg_indexes": "schemaname VARCHAR, tablename VARCHAR, indexname VARCHAR, "
    "tablespace VARCHAR, indexdef VARCHAR",
    "pg_stat_activity": "datid INTEGER, datname VARCHAR, pid INTEGER, usename VARCHAR, "
    "application_name VARCHAR, client_addr VARCHAR, state VARCHAR, query VARCHAR",
    "pg_locks": "locktype VARCHAR, database INTEGER, relation INTEGER, pid INTEGER, "
    "mode VARCHAR, granted BOOLEAN",
    "pg_stat_user_tables": "relid INTEGER, schemaname VARCHAR, relname VARCHAR, n_live_tup BIGINT",
    "pg_timezone_names": "name VARCHAR, abbrev VARCHAR, utc_offset INTERVAL, is_dst BOOLEAN",
    "pg_available_extensions": "name VARCHAR, default_version VARCHAR, "
    "installed_version VARCHAR, comment VARCHAR",
}

INFORMATION_SCHEMA: dict[str, str] = {
    "schemata": "catalog_name VARCHAR, schema_name VARCHAR, schema_owner VARCHAR, "
    "default_character_set_catalog VARCHAR, default_character_set_schema VARCHAR, "
    "default_character_set_name VARCHAR, sql_path VARCHAR",
    "tables": "table_catalog VARCHAR, table_schema VARCHAR, table_name VARCHAR, "
    "table_type VARCHAR, self_referencing_column_name VARCHAR, reference_generation VARCHAR, "
    "user_defined_type_catalog VARCHAR, user_defined_type_schema VARCHAR, "
    "user_defined_type_name VARCHAR, is_insertable_into VARCHAR, is_typed VARCHAR, "
    "commit_action VARCHAR",
    "columns": "table_catalog VARCHAR, table_schema VARCHAR, table_name VARCHAR, "
    "column_name VARCHAR, ordinal_position INTEGER, column_default VARCHAR, "
    "is_nullable VARCHAR, data_type VARCHAR, character_maximum_length INTEGER, "
    "character_octet_length INTEGER, numeric_precision INTEGER, "
    "numeric_precision_radix INTEGER, numeric_scale INTEGER, datetime_precision INTEGER, "
    "interval_type VARCHAR, interval_precision INTEGER, character_set_catalog VARCHAR, "
    "character_set_schema VARCHAR, character_set_name VARCHAR, collation_catalog VARCHAR, "
    "collation_schema VARCHAR, collation_name VARCHAR, domain_catalog VARCHAR, "
    "domain_schema VARCHAR, domain_name VARCHAR, udt_catalog VARCHAR, udt_schema VARCHAR, "
    "udt_name VARCHAR, scope_catalog VARCHAR, scope_schema VARCHAR, scope_name VARCHAR, "
    "maximum_cardinality INTEGER, dtd_identifier VARCHAR, is_self_referencing VARCHAR, "
    "is_identity VARCHAR, identity_generation VARCHAR, identity_start VARCHAR, "
    "identity_increment VARCHAR, identity_maximum VARCHAR, identity_minimum VARCHAR, "
    "identity_cycle VARCHAR, is_generated VARCHAR, generation_expression VARCHAR, "
    "is_updatable VARCHAR",
    "views": "table_catalog VARCHAR, table_schema VARCHAR, table_name VARCHAR, "
    "view_definition VARCHAR, check_option VARCHAR, is_updatable VARCHAR, "
    "is_insertable_into VARCHAR",
    "table_constraints": "constraint_catalog VARCHAR, constraint_schema VARCHAR, "
    "constraint_name VARCHAR, table_catalog VARCHAR, table_schema VARCHAR, "
    "table_name VARCHAR, constraint_type VARCHAR, is_deferrable VARCHAR, "
    "initially_deferred VARCHAR, enforced VARCHAR",
    "key_column_usage": "constraint_catalog VARCHAR, constraint_schema VARCHAR, "
    "constraint_name VARCHAR, table_catalog VARCHAR, table_schema VARCHAR, "
    "table_name VARCHAR, column_name VARCHAR, ordinal_position INTEGER, "
    "position_in_unique_constraint INTEGER",
    "referential_constraints": "constraint_catalog VARCHAR, constraint_schema VARCHAR, "
    "constraint_name VARCHAR, unique_constraint_catalog VARCHAR, "
    "unique_constraint_schema VARCHAR, unique_constraint_name VARCHAR, "
    "match_option VARCHAR, update_rule VARCHAR, delete_rule VARCHAR",
    "routines": "specific_catalog VARCHAR, specific_schema VARCHAR, specific_name VARCHAR, "
    "routine_catalog VARCHAR, routine_schema VARCHAR, routine_name VARCHAR, "
    "routine_type VARCHAR, data_type VARCHAR",
    "parameters": "specific_catalog VARCHAR, specific_schema VARCHAR, "
    "specific_name VARCHAR, ordinal_position INTEGER, parameter_name VARCHAR, "
    "data_type VARCHAR",
    "character_sets": "character_set_catalog VARCHAR, character_set_schema VARCHAR, "
    "character_set_name VARCHAR, character_repertoire VARCHAR, form_of_use VARCHAR, "
    "default_collate_catalog VARCHAR, default_collate_schema VARCHAR, "
    "default_collate_name VARCHAR",
    "enabled_roles": "role_name VARCHAR",
    "table_privileges": "grantor VARCHAR, grantee VARCHAR, table_catalog VARCHAR, "
    "table_schema VARCHAR, table_name VARCHAR, privilege_type VARCHAR, "
    "is_grantable VARCHAR, with_hierarchy VARCHAR",
}


@dataclass(frozen=True)
class Column:
    """One virtual column as the catalog lists it."""

    name: str
    attnum: int
    type: ColumnType
    description: str | None


def catalog_columns(table: VirtualTable, types: Mapping[str, pa.DataType]) -> list[Column]:
    return [
        Column(c.name, i + 1, column_type(types[c.name]), c.description)
        for i, c in enumerate(table.columns)
    ]


_NUMERIC_INFO = {21: (16, 0), 23: (32, 0), 20: (64, 0), 700: (24, None), 701: (53, None)}
_INFO_TYPE = {
    "int8": "bigint",
    "int4": "integer",
    "int2": "smallint",
    "float4": "real",
    "float8": "double precision",
    "bool": "boolean",
    "text": "text",
    "date": "date",
    "timestamp": "timestamp without time zone",
    "timestamptz": "timestamp with time zone",
    "numeric": "numeric",
    "bytea": "bytea",
    "interval": "interval",
    "time": "time without time zone",
    "varchar": "character varying",
}


def rows(
    table: VirtualTable, columns: list[Column], database: str, user: str
) -> dict[str, list[tuple[Any, ...]]]:
    """Every emulated table's rows (tables not named here have none)."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    out["pg_namespace"] = [
        (NS_CATALOG, "pg_catalog", OWNER_OID, None),
        (NS_PUBLIC, SCHEMA, OWNER_OID, None),
        (NS_INFO, "information_schema", OWNER_OID, None),
    ]
    out["pg_class"] = [
        (
            TABLE_OID,
            table.name,
            NS_PUBLIC,
            ROWTYPE_OID,
            0,
            OWNER_OID,
            2,
            TABLE_OID,
            0,
            0,
            -1.0,
            0,
            0,
            False,
            False,
            "p",
            "r",
            len(columns),
            0,
            False,
            False,
            False,
            False,
            False,
            True,
            "d",
            False,
            0,
            0,
            0,
            None,
            None,
            None,
            False,
        )
    ]
    out["pg_attribute"] = [
        (
            TABLE_OID,
            c.name,
            c.type.oid,
            -1,
            c.type.size,
            c.attnum,
            0,
            -1,
            c.type.typmod,
            c.type.size in (1, 2, 4, 8),
            "i",
            "p",
            "",
            False,
            False,
            False,
            "",
            "",
            False,
            True,
            0,
            100 if c.type.oid == 25 else 0,
            None,
            None,
            None,
            None,
        )
        for c in columns
    ]
    types = []
    for t in TYPES:
        cat = t.category
        types.append(
            (
                t.oid,
                t.name,
                NS_CATALOG,
                OWNER_OID,
                t.size,
                t.size in (1, 2, 4, 8),
                "p" if cat == "P" else "b",
                cat,
                False,
                True,
                ",",
                0,
                "-",
                0,
                t.array_oid,
                f"{t.name}in",
                f"{t.name}out",
                f"{t.name}recv",
                f"{t.name}send",
                "-",
                "-",
                "-",
                "i",
                "p",
                False,
                0,
                -1,
                0,
                100 if cat == "S" else 0,
                None,
                None,
                None,
            )
        )
        if t.array_oid:
            types.append(
                (
                    t.array_oid,
                    f"_{t.name}",
                    NS_CATALOG,
                    OWNER_OID,
                    -1,
                    False,
                    "b",
                    "A",
                    False,
                    True,
                    ",",
                    0,
                    "array_subscript_handler",
                    t.oid,
                    0,
                    "array_in",
                    "array_out",
                    "array_recv",
                    "array_send",
                    "-",
                    "-",
                    "array_typanalyze",
                    "i",
                    "x",
                    False,
                    0,
                    -1,
                    0,
                    100 if cat == "S" else 0,
                    None,
                    None,
                    None,
                )
            )
    types.append(
        (
            ROWTYPE_OID,
            table.name,
            NS_PUBLIC,
            OWNER_OID,
            -1,
            False,
            "c",
            "C",
            False,
            True,
            ",",
            TABLE_OID,
            "-",
            0,
            ROWTYPE_ARRAY_OID,
            "record_in",
            "record_out",
            "record_recv",
            "record_send",
            "-",
            "-",
            "-",
            "d",
            "x",
            False,
            0,
            -1,
            0,
            0,
            None,
            None,
            None,
        )
    )
    types.append(
        (
            ROWTYPE_ARRAY_OID,
            f"_{table.name}",
            NS_PUBLIC,
            OWNER_OID,
            -1,
            False,
            "b",
            "A",
            False,
            True,
            ",",
            0,
            "array_subscript_handler",
            ROWTYPE_OID,
            0,
            "array_in",
            "array_out",
            "array_recv",
            "array_send",
            "-",
            "-",
            "array_typanalyze",
            "d",
            "x",
            False,
            0,
            -1,
            0,
            0,
            None,
            None,
            None,
        )
    )
    out["pg_type"] = types
    procs = sorted({r[i] for r in types for i in (15, 16, 17, 18, 21) if r[i] != "-"})
    out["pg_proc"] = [
        (
            9000 + i,
            name,
            NS_CATALOG,
            OWNER_OID,
            12,
            "f",
            False,
            2278,
            1,
            None,
            None,
            None,
            None,
            name,
        )
        for i, name in enumerate(procs)
    ]
    desc = [(TABLE_OID, PG_CLASS_OID, 0, table.description)] if table.description else []
    desc += [(TABLE_OID, PG_CLASS_OID, c.attnum, c.description) for c in columns if c.description]
    out["pg_description"] = desc
    out["pg_database"] = [
        (
            DATABASE_OID,
            database,
            OWNER_OID,
            6,
            "c",
            False,
            True,
            -1,
            0,
            1,
            1663,
            "C.UTF-8",
            "C.UTF-8",
            None,
            None,
            None,
            13000,
        )
    ]
    out["pg_roles"] = [
        (OWNER_OID, user, False, True, False, False, True, False, -1, "********", None, False, None)
    ]
    out["pg_user"] = [(user, OWNER_OID, False, False, False, False, "********", None, None)]
    out["pg_am"] = [(2, "heap", "heap_tableam_handler", "t"), (403, "btree", "bthandler", "i")]
    out["pg_tablespace"] = [(1663, "pg_default", OWNER_OID, None, None)]
    out["pg_collation"] = [(100, "default", NS_CATALOG, OWNER_OID, "d", True, -1, None, None)]
    out["pg_language"] = [
        (12, "internal", OWNER_OID, False),
        (13, "c", OWNER_OID, False),
        (14, "sql", OWNER_OID, False),
    ]
    out["pg_extension"] = [(13000, "plpgsql", OWNER_OID, NS_CATALOG, False, "1.0")]
    out["pg_tables"] = [(SCHEMA, table.name, user, None, False, False, False, False)]
    out["schemata"] = [
        (database, s, user, None, None, "UTF8", None)
        for s in ("pg_catalog", "information_schema", SCHEMA)
    ]
    out["tables"] = [
        (database, SCHEMA, table.name, "BASE TABLE", None, None, None, None, None, "NO", "NO", None)
    ]
    cols = []
    for c in columns:
        pg = c.type.name
        prec, scale = _NUMERIC_INFO.get(c.type.oid, (None, None))
        if c.type.oid == 1700 and c.type.typmod >= 4:
            prec, scale = (c.type.typmod - 4) >> 16, (c.type.typmod - 4) & 0xFFFF
        cols.append(
            (
                database,
                SCHEMA,
                table.name,
                c.name,
                c.attnum,
                None,
                "YES",
                _INFO_TYPE.get(pg, "USER-DEFINED" if pg not in _INFO_TYPE else pg),
                None,
                1073741824 if c.type.oid == 25 else None,
                prec,
                (2 if c.type.oid in (21, 23, 20, 700, 701) else 10) if prec is not None else None,
                scale,
                6 if c.type.oid in (1114, 1184) else 0 if c.type.oid == 1082 else None,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                database,
                "pg_catalog",
                pg,
                None,
                None,
                None,
                None,
                str(c.attnum),
                "NO",
                "NO",
                None,
                None,
                None,
                None,
                None,
                "NO",
                "NEVER",
                None,
                "NO",
            )
        )
    out["columns"] = cols
    out["enabled_roles"] = [(user,)]
    out["character_sets"] = [(None, None, "UTF8", "UCS", "UTF8", database, "pg_catalog", "C.UTF-8")]
    return out


def described_type(oid: int, typmod: int) -> str:
    return format_type(oid, typmod)
